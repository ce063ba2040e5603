"""String equality, ``IN`` and prefix ``LIKE`` read straight from an Arrow string array's buffers.

Arrow's string kernels (``equal``, ``is_in``, ``starts_with``) compare row by row through a
length test and a ``memcmp``: 3-20 ns per row on short strings, most of it branch misses, and an
``IN`` list is one scan per value (``is_in`` hashes every row, slower still). Here the same
answers come from a few branch-free numpy passes over the two buffers of a ``string`` (or
``large_string``) array, for all the literals at once:

1. the offsets buffer gives every row's byte length (one subtraction per row); a row whose length
   fits no literal is false without touching its bytes;
2. for the rows that remain (all rows when most remain, else only those, found once with
   ``nonzero`` and their answers scattered back), the row's first bytes are assembled from the
   two aligned words of the data buffer that hold them (32-bit words when every literal has at
   most 4 bytes, half the memory traffic, else 64-bit) and compared with each literal's first
   word under a mask; literals longer than 8 bytes compare 8 more bytes at a time on the rows
   still matching.

The two gathers per candidate row are the floor of this design (numpy has no cheaper way to read
a word at an arbitrary byte offset): about 3 ns per row on this project's 2-core machine, which
is why on this path a single string test stays at 20-45x the per-message evaluator rather than
the 50x numeric ones reach (docs/benchmarks.md, ``selector_bench``); hence the C accelerator.

Comparison is on UTF-8 bytes, which is exactly string equality (two strings are equal iff their
UTF-8 encodings are) and prefix (UTF-8 is self-synchronizing). A literal Arrow cannot hold (a
lone surrogate) never matches and is left out by the caller. Results are plain numpy bools, one
per row, meaningless on null rows (the caller masks them with the validity bitmap). A misaligned
data buffer, or a slice that ends at the buffer's end, is read through a zero-padded copy of the
slice's bytes; offsets that decrease (which Arrow forbids) give unspecified answers, as Arrow's
own kernels do, but numpy's bounds-checked ``take`` never reads outside the words.

When the optional C accelerator ``_strkernels`` was built (``setup.py``; it needs a C compiler at
install time), ``array_hits`` uses it instead: one pass over the offsets and data buffers, about
1 ns per row, bounds-checked (offsets that decrease or run past the data raise ``ValueError``).
The numpy path above is the fallback when it is missing, or when the environment variable
``AMQP_JMS_NO_ACCEL`` is set to anything but ``""``/``"0"`` (read at import: tests and benchmarks
run both paths that way). Both give the same answers on every valid array.
"""

from __future__ import annotations

import sys
from functools import reduce
from typing import Any

import numpy as np
import pyarrow as pa

from .._accel import load_accelerator

__all__ = ["Literals", "StringBuffers", "accelerated", "array_hits", "hits", "string_buffers"]

_ACCEL = load_accelerator("amqp_jms.selector._strkernels")


def accelerated() -> bool:
    """Whether string tests run on the C accelerator (else on the numpy path)."""
    return _ACCEL is not None


_U64 = np.uint64
_LITTLE_ENDIAN = sys.byteorder == "little"
_SIXTY_THREE, _SIXTY_FOUR = _U64(63), _U64(64)
_THREE_I = np.int64(3)
_U32_THREE, _U32_THIRTY_TWO = np.uint32(3), np.uint32(32)
_ONE_INTP = np.intp(1)
_SMALL = {4: (np.int32(2), np.int32(3)), 8: (np.int64(2), np.int64(3))}
_U32_FULL, _U64_FULL = np.uint32(0xFFFFFFFF), _U64(0xFFFFFFFFFFFFFFFF)


class Literals:
    """UTF-8 literals prepared once per selector: each split into 8-byte little-endian words with
    the mask of its last, partial word, grouped by byte length."""

    __slots__ = ("by_length", "lengths", "narrow", "prefix", "values")

    def __init__(self, values: list[bytes], prefix: bool) -> None:
        self.prefix = prefix
        unique = list(dict.fromkeys(values))  # duplicates removed, order kept
        self.values = tuple(unique)  # as the C accelerator takes them
        # literals of at most 4 bytes compare as 32-bit words: half the memory traffic per row
        self.narrow = all(len(v) <= 4 for v in unique)
        word = np.uint32 if self.narrow else _U64
        by_length: dict[int, list[list[tuple[Any, Any]]]] = {}
        for v in unique:
            words = []
            for c in range(0, len(v), 8):
                chunk = v[c : c + 8]
                words.append((word(int.from_bytes(chunk, "little")), word((1 << (8 * len(chunk))) - 1)))
            by_length.setdefault(len(v), []).append(words)
        self.by_length = by_length
        self.lengths = sorted(by_length)


class StringBuffers:
    """Row lengths, start positions and the data buffer as aligned 64-bit words for one array."""

    __slots__ = ("base", "first_word", "lengths", "n", "starts", "words")

    def __init__(self, lengths: Any, starts: Any, base: int, words: Any, first_word: int) -> None:
        self.lengths = lengths  # int32/int64 per row
        self.starts = starts  # offsets[:-1]: where each row starts in the data buffer
        self.base = base  # the data buffer's byte that is ``words``' first byte
        self.words = words  # uint64, readable up to 8 bytes past every row's last byte
        self.first_word = first_word  # the word holding the array's first byte
        self.n = len(lengths)


def string_buffers(array: Any) -> StringBuffers | None:
    """The buffers of a ``string``/``large_string`` array (any slice offset), or None when they
    cannot be read safely as words."""
    t = array.type
    if not _LITTLE_ENDIAN:  # the words are compared as little-endian integers
        return None
    if pa.types.is_string(t):
        odt: Any = np.int32
    elif pa.types.is_large_string(t):
        odt = np.int64
    else:
        return None
    n = len(array)
    bufs = array.buffers()
    if bufs[1] is None:
        if n:
            return None
        offsets = np.zeros(1, odt)
    else:
        offsets = np.frombuffer(bufs[1], odt, n + 1, array.offset * np.dtype(odt).itemsize)
    # Arrow requires non-decreasing offsets; on an invalid array the answers are unspecified (as
    # with Arrow's own kernels) but numpy's bounds-checked ``take`` never reads outside ``words``.
    lengths = offsets[1:] - offsets[:-1]
    first, last = int(offsets[0]), int(offsets[-1])
    count = (last >> 3) + 2  # every word a row can touch, plus the one after it
    data = bufs[2]
    if data is not None and data.address % 8 == 0 and count * 8 <= data.size:
        # a view from the buffer's first byte: the offsets are the byte positions as they are
        return StringBuffers(lengths, offsets[:-1], 0, np.frombuffer(data, _U64, count), first >> 3)
    # the slice ends at the buffer's end (or the buffer is misaligned): a zero-padded copy of
    # this slice's bytes, from the 8-byte boundary at or before its first
    base = first & ~7
    words = np.zeros(((last - base) >> 3) + 2, _U64)
    if data is not None and last > first:
        words.view(np.uint8)[: last - base] = np.frombuffer(data, np.uint8, last - base, base)
    return StringBuffers(lengths, offsets[:-1], base, words, 0)


def _words_at(words: Any, pos: Any) -> Any:
    """The 8 bytes starting at each byte position ``pos`` (int64), as little-endian uint64: the
    two aligned words that hold them, shifted together (numpy defines a shift by 64 as 0, which
    is what a row starting on a word boundary needs from the second word)."""
    i = pos >> _THREE_I
    lo = words.take(i)
    i += _ONE_INTP
    hi = words.take(i)
    shift = (pos << _THREE_I).view(_U64)
    shift &= _SIXTY_THREE
    lo >>= shift
    np.subtract(_SIXTY_FOUR, shift, out=shift)
    hi <<= shift
    lo |= hi
    return lo


def _words4_at(words: Any, pos: Any) -> Any:
    """``_words_at`` for 4 bytes, in 32-bit words (``pos`` int32 or int64)."""
    two, three = _SMALL[pos.dtype.itemsize]  # scalars of pos' own type: no promotion to resolve
    i = (pos >> two).astype(np.intp)  # ``take`` wants intp indices (it converts others slowly)
    lo = words.take(i)
    i += _ONE_INTP
    hi = words.take(i)
    shift = (pos & three).astype(np.uint32)
    shift <<= _U32_THREE
    lo >>= shift
    np.subtract(_U32_THIRTY_TWO, shift, out=shift)
    hi <<= shift
    lo |= hi
    return lo


def _match(buffers: StringBuffers, starts: Any, sizes: dict[int, Any] | None, lits: Literals) -> Any:
    """One bool per given row (``starts``: where it starts in the data buffer): whether its
    bytes equal (or start with) one of the literals. ``sizes`` maps each literal length to the
    rows' length test (None: every given row passes it)."""
    words = buffers.words
    full: Any
    if lits.narrow:
        pos = starts - starts.dtype.type(buffers.base) if buffers.base else starts
        first = _words4_at(words.view(np.uint32), pos)
        full = _U32_FULL
    else:
        pos = np.subtract(starts, buffers.base, dtype=np.int64)
        first = _words_at(words, pos)
        full = _U64_FULL
    out: Any = None
    hit: Any
    for k in lits.lengths:
        group = lits.by_length[k]
        if k == 0:
            hit = np.ones(len(pos), np.bool_) if sizes is None else sizes[k].copy()
        else:
            mask = group[0][0][1]  # the first word's mask: the same for every literal of length k
            w = first if mask == full else first & mask
            hit = None
            for literal in group:
                h = w == literal[0][0]
                if len(literal) > 1:  # longer than 8 bytes: the rest, 8 bytes at a time
                    if sizes is not None:
                        h &= sizes[k]  # only rows that hold all k bytes read past the first 8
                    for c, (value, chunk_mask) in enumerate(literal[1:], 1):
                        rows = h.nonzero()[0]
                        if not len(rows):
                            break
                        more = _words_at(words, pos.take(rows) + 8 * c)
                        more &= chunk_mask
                        h[rows] = more == value
                hit = h if hit is None else np.logical_or(hit, h, out=hit)
            if sizes is not None:
                hit &= sizes[k]
        out = hit if out is None else np.logical_or(out, hit, out=out)
    return out if out is not None else np.zeros(len(pos), np.bool_)


def _touch(words: Any) -> None:
    """Read one byte of every cache line of the data, in order, before the gathers: the CPU
    prefetches a sequential pass, where the gathers' scattered first touches each wait for
    memory (measured: a cold 100,000-row slice compares 30% faster with it)."""
    np.add.reduce(words.view(np.uint8)[::64])


def hits(buffers: StringBuffers, lits: Literals, alive: Any = None) -> Any:
    """One bool per row of the array: whether it equals one of the literals (``prefix``: starts
    with one). Null rows carry arbitrary values, and so do rows outside ``alive`` (when given:
    the rows whose answer matters, the others are not read)."""
    n, lengths = buffers.n, buffers.lengths
    if not lits.lengths:
        return np.zeros(n, np.bool_)
    sizes = {k: (lengths >= k if lits.prefix else lengths == k) for k in lits.lengths}
    # dense or sparse, judged on a sample: finding the candidate rows, gathering only theirs and
    # scattering the answers back wins (measured) until about two thirds of the rows are candidates
    one = len(sizes) == 1 or lits.prefix  # then one length test selects the candidates
    if one:
        sample = sizes[lits.lengths[0]][:4096]
    else:
        sample = reduce(np.logical_or, [size[:4096] for size in sizes.values()])
    if alive is not None:
        sample = sample & alive[:4096]
    if np.count_nonzero(sample) * 3 >= 2 * min(n, 4096):
        return _match(buffers, buffers.starts, sizes, lits)
    candidates = sizes[lits.lengths[0]] if one else reduce(np.logical_or, sizes.values())
    if alive is not None:
        candidates = candidates & alive
    rows = candidates.nonzero()[0]
    if not len(rows):
        return np.zeros(n, np.bool_)
    _touch(buffers.words[buffers.first_word :])
    if len(sizes) == 1:
        subset = None  # every candidate has the one length (or, for a prefix, at least it)
    else:
        lengths = lengths.take(rows)
        subset = {k: (lengths >= k if lits.prefix else lengths == k) for k in lits.lengths}
    out = np.zeros(n, np.bool_)
    out[rows] = _match(buffers, buffers.starts.take(rows), subset, lits)
    return out


_WIDTH = {pa.string().id: 4, pa.large_string().id: 8}


def array_hits(array: Any, lits: Literals, alive: Any = None) -> Any:
    """``hits`` for a ``string``/``large_string`` array, on the C accelerator when it is built;
    None when the array cannot be read this way (the caller then uses Arrow's kernels).

    The accelerator reads every row (``alive`` is only a hint for the numpy path, which skips
    the others): at about 1 ns per row, finding and skipping dead rows would cost more."""
    accel = _ACCEL
    if accel is None:
        buffers = string_buffers(array)
        return None if buffers is None else hits(buffers, lits, alive)
    width = _WIDTH.get(array.type.id)
    if width is None:
        return None
    n = len(array)
    out = np.empty(n, np.bool_)
    if n == 0 or not lits.values:
        out[:] = False
        return out
    _, offsets, data = array.buffers()
    accel.match(offsets, b"" if data is None else data, array.offset, n, width, lits.values, lits.prefix, out)
    return out
