"""The optional C accelerator of the selector's string tests (``_strkernels``) answers exactly like
the numpy path and like ``Selector.matches``, never reads outside the buffers it is given (bad
sizes and offsets raise ValueError), and ``AMQP_JMS_NO_ACCEL=1`` really runs the numpy fallback:
the whole selector suite passes on it too."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amqp_jms.message import TextMessage
from amqp_jms.selector import Selector, arrow_strings
from amqp_jms.selector.arrow_strings import Literals, accelerated, array_hits, hits, string_buffers
from amqp_jms.testing.messages import with_properties

try:
    from amqp_jms.selector import _strkernels
except ImportError:  # not built here: only the fallback tests run
    _strkernels = None  # type: ignore[assignment]

needs_accel = pytest.mark.skipif(_strkernels is None, reason="the C accelerator was not built")
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ROOT = Path(__file__).resolve().parents[2]

# pieces that make prefixes of each other, multi-byte UTF-8 (2, 3, 4 bytes), NUL bytes, and
# strings longer than 8 and 16 bytes
PIECES = ["", "a", "ab", "abc", "\x00", "a\x00", "é", "€", "𝄞", "abcdefgh", "abcdefghi", "abcdefghijklmnopq"]
texts = st.one_of(st.lists(st.sampled_from(PIECES), max_size=4).map("".join), st.text(max_size=20))
columns = st.lists(st.one_of(st.none(), texts), max_size=60)
literal_lists = st.lists(texts, min_size=1, max_size=5)


@contextmanager
def numpy_path() -> Iterator[None]:
    """Evaluate with the numpy fallback inside the block (as AMQP_JMS_NO_ACCEL=1 does)."""
    saved = arrow_strings._ACCEL
    arrow_strings._ACCEL = None
    try:
        yield
    finally:
        arrow_strings._ACCEL = saved


def _expected(values: list[str | None], literals: list[str], prefix: bool) -> list[bool | None]:
    if prefix:
        return [None if v is None else any(v.startswith(lit) for lit in literals) for v in values]
    return [None if v is None else v in literals for v in values]


def _sliced(values: list[str | None], t: pa.DataType, pad: int) -> pa.Array:
    """``values`` as an array of type ``t`` that starts ``pad`` rows into its buffers."""
    return pa.array(["pad-ding-0123456789", None, "x"][:pad] + values, t).slice(pad)


def _c_hits(array: pa.Array, lits: Literals) -> list[bool]:
    width = 4 if array.type == pa.string() else 8
    out = np.zeros(len(array), np.bool_)
    _, offsets, data = array.buffers()
    if len(array):
        args = (array.offset, len(array), width, lits.values, lits.prefix, out)
        _strkernels.match(offsets, data or b"", *args)
    return out.tolist()


@needs_accel
@SETTINGS
@given(columns, literal_lists, st.booleans(), st.sampled_from([pa.string(), pa.large_string()]),
       st.integers(0, 3))
def test_kernel_agrees_with_numpy_path_and_python(
    values: list[str | None], literals: list[str], prefix: bool, t: pa.DataType, pad: int
) -> None:
    array = _sliced(values, t, pad)
    lits = Literals([lit.encode("utf-8", "surrogatepass") for lit in literals], prefix)
    got = _c_hits(array, lits)
    buffers = string_buffers(array)
    assert buffers is not None
    by_numpy = hits(buffers, lits).tolist()
    for row, (expected, c, n) in enumerate(zip(_expected(values, literals, prefix), got, by_numpy)):
        if expected is not None:  # null rows carry any value
            assert c == expected == n, (row, values[row], literals, prefix)


@needs_accel
@SETTINGS
@given(columns, literal_lists, st.sampled_from(["=", "<>", "IN", "NOT IN", "LIKE", "NOT LIKE"]),
       st.integers(0, 3), st.integers(1, 4))
def test_selectors_agree_with_matches_on_both_paths(
    values: list[str | None], literals: list[str], shape: str, pad: int, chunks: int
) -> None:
    quoted = ["'" + lit.replace("'", "''") + "'" for lit in literals]
    if shape in ("=", "<>"):
        text = f"s {shape} {quoted[0]}"
    elif shape.endswith("IN"):
        text = f"s {shape} ({', '.join(quoted)})"
    else:  # a prefix pattern: % and _ in the literal escaped with !
        lit = literals[0].replace("!", "!!").replace("%", "!%").replace("_", "!_")
        escaped = lit.replace("'", "''")
        text = f"s {shape} '{escaped}%' ESCAPE '!'"
    sel = Selector(text)
    messages = []
    for v in values:
        m = TextMessage("x")
        if v is not None:
            m = with_properties(m, {"s": v})
        messages.append(m)
    expected = [sel.matches(m) for m in messages]
    column = _sliced(values, pa.string(), pad)
    batch = pa.RecordBatch.from_arrays([column], names=["s"])
    size = max(1, -(-len(values) // chunks))
    table = pa.Table.from_batches(
        [batch.slice(i, size) for i in range(0, len(values), size)] or [batch], schema=batch.schema
    )
    assert sel.evaluate_batch(batch).to_pylist() == expected, text
    assert sel.evaluate_batch(table).to_pylist() == expected, text
    with numpy_path():
        assert sel.evaluate_batch(batch).to_pylist() == expected, text
        assert sel.evaluate_batch(table).to_pylist() == expected, text


@needs_accel
def test_big_batch_and_mixed_chain_agree_on_both_paths() -> None:
    """Over the plan's 2^17-row chunking and in an AND/OR chain with numeric terms."""
    rng = np.random.default_rng(3)
    n = 300_000
    words = np.array(["blue", "red", "", "blueberry", "bl", "ord-1", "ord-12", "€uro", "a\x00b"], object)
    s = pa.array(words[rng.integers(0, len(words), n)], pa.string(), mask=rng.random(n) < 0.1)
    w = pa.array(rng.integers(0, 3000, n), pa.int64())
    batch = pa.RecordBatch.from_arrays([s, w], names=["s", "w"])
    for text in [
        "s IN ('blue', 'red', '')",
        "(s = 'blue' OR s = 'bl') AND w > 500",
        "s LIKE 'ord-1%' OR w < 10",
        "NOT (s LIKE 'bl%') AND w BETWEEN 100 AND 2000",
    ]:
        sel = Selector(text)
        fast = sel.evaluate_batch(batch)
        with numpy_path():
            assert fast.equals(sel.evaluate_batch(batch)), text
    sample = batch.slice(123_456, 2000)
    sel = Selector("(s = 'blue' OR s = 'bl') AND w > 500")
    rows = sample.to_pylist()
    assert sel.evaluate_batch(sample).to_pylist() == [
        r["s"] in ("blue", "bl") and r["w"] > 500 for r in rows
    ]


# --- bad input: every size and offset is checked before anything is read ---------------------------

def _buffers(values: list[str]) -> tuple[bytes, bytes]:
    array = pa.array(values, pa.string())
    _, offsets, data = array.buffers()
    return offsets.to_pybytes(), data.to_pybytes()


@needs_accel
@pytest.mark.parametrize(
    ("args", "message"),
    [
        # offsets buffer too short for offset + length + 1 entries
        (lambda o, d, out: (o[:8], d, 0, 3, 4, (b"a",), False, out), "too short"),
        (lambda o, d, out: (o, d, 2, 3, 4, (b"a",), False, out), "too short"),
        (lambda o, d, out: (o, d, 0, 2**62, 4, (b"a",), False, out), "too short"),
        (lambda o, d, out: (o, d, 2**62, 1, 8, (b"a",), False, out), "too short"),
        (lambda o, d, out: (o, d, -1, 1, 4, (b"a",), False, out), ">= 0"),
        (lambda o, d, out: (o, d, 0, -1, 4, (b"a",), False, out), ">= 0"),
        # the last offset past the data buffer
        (lambda o, d, out: (o, d[:3], 0, 3, 4, (b"a",), False, out), "data buffer"),
        (lambda o, d, out: (o, b"", 0, 3, 4, (b"a",), False, out), "data buffer"),
        # offsets read as int64 from an int32 buffer: garbage positions, rejected
        (lambda o, d, out: (o, d, 0, 1, 8, (b"a",), False, out), "data buffer"),
        (lambda o, d, out: (o, d, 0, 3, 4, (b"a",), False, out[:2]), "output buffer"),
        (lambda o, d, out: (o, d, 0, 3, 2, (b"a",), False, out), "width"),
    ],
)
def test_bad_buffers_raise_value_error(args: Any, message: str) -> None:
    offsets, data = _buffers(["abc", "de", "fghij"])
    out = np.zeros(3, np.bool_)
    with pytest.raises(ValueError, match=message):
        _strkernels.match(*args(offsets, data, out))


@needs_accel
@pytest.mark.parametrize(
    "offsets",
    [
        [0, 5, 2, 10],  # decreasing in the middle, last offset still in range
        [0, 100, 5, 10],  # a row running past the data buffer, then back
        [-3, 2, 4, 10],  # negative first
        [0, 2**31 - 1, 3, 10],
    ],
)
def test_invalid_offsets_raise_value_error(offsets: list[int]) -> None:
    data = b"abcdefghij"
    out = np.zeros(3, np.bool_)
    with pytest.raises(ValueError):
        _strkernels.match(np.array(offsets, np.int32), data, 0, 3, 4, (b"abcdefghijk", b"ab"), True, out)
    with pytest.raises(ValueError):
        _strkernels.match(np.array(offsets, np.int64), data, 0, 3, 8, (b"abcdefghijk", b"ab"), False, out)


@needs_accel
def test_invalid_arrow_array_raises_value_error_from_evaluate_batch() -> None:
    """Arrow does not validate arrays built from buffers; the selector must not read past them."""
    offsets = pa.py_buffer(np.array([0, 4, 400, 8], np.int32).tobytes())
    array = pa.Array.from_buffers(pa.string(), 3, [None, offsets, pa.py_buffer(b"bluered!")])
    batch = pa.RecordBatch.from_arrays([array], names=["s"])
    with pytest.raises(ValueError, match="offsets"):
        Selector("s = 'blue'").evaluate_batch(batch)


@needs_accel
def test_wrong_argument_types_raise_type_error() -> None:
    offsets, data = _buffers(["abc"])
    out = np.zeros(1, np.bool_)
    with pytest.raises(TypeError, match="bytes"):
        _strkernels.match(offsets, data, 0, 1, 4, ("abc",), False, out)
    with pytest.raises(TypeError):
        _strkernels.match(offsets, data, 0, 1, 4, [b"abc"], False, out)
    with pytest.raises((TypeError, BufferError)):  # a read-only output buffer
        _strkernels.match(offsets, data, 0, 1, 4, (b"abc",), False, bytes(1))


@needs_accel
def test_unaligned_buffers_and_misaligned_offsets_are_read_correctly() -> None:
    raw = np.zeros(4 * 4 + 1, np.uint8)
    offsets = raw[1:]  # starts one byte past an aligned address
    offsets[:] = np.frombuffer(np.array([0, 4, 7, 11], np.int32).tobytes(), np.uint8)
    data = np.frombuffer("_bluered€x".encode(), np.uint8)[1:]
    out = np.zeros(3, np.bool_)
    _strkernels.match(offsets, data, 0, 3, 4, (b"blue", "€x".encode()), False, out)
    assert out.tolist() == [True, False, True]


def test_accelerated_when_built() -> None:
    """The accelerator is used whenever its module was built (and the env var does not say no)."""
    no = os.environ.get("AMQP_JMS_NO_ACCEL", "") not in ("", "0")
    assert accelerated() == (_strkernels is not None and not no)


def test_no_accel_env_var_selects_numpy_path() -> None:
    code = "from amqp_jms.selector.arrow_strings import accelerated; print(accelerated())"
    env = dict(os.environ, AMQP_JMS_NO_ACCEL="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_array_hits_falls_back_on_types_it_cannot_read() -> None:
    lits = Literals([b"a"], False)
    assert array_hits(pa.array([1, 2]), lits) is None
    assert array_hits(pa.array(["a", "b"], pa.string()), lits).tolist() == [True, False]
    assert array_hits(pa.array([], pa.string()), lits).tolist() == []


@pytest.mark.skipif(os.environ.get("AMQP_JMS_NO_ACCEL", "") not in ("", "0"), reason="already the fallback")
def test_whole_selector_suite_passes_on_numpy_fallback() -> None:
    """Every other selector test file that evaluates batches, once more with AMQP_JMS_NO_ACCEL=1,
    in a fresh interpreter (the others never reach the string kernels)."""
    unit = ROOT / "tests" / "unit"
    files = sorted(
        str(p)
        for p in unit.glob("test_selector_*.py")
        if p.name != Path(__file__).name and "evaluate_batch" in p.read_text(encoding="utf-8")
    )
    assert len(files) >= 5
    env = dict(os.environ, AMQP_JMS_NO_ACCEL="1")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *files],
        cwd=ROOT, env=env, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert " passed" in result.stdout and "failed" not in result.stdout


@needs_accel
@pytest.mark.parametrize("count", [2, 5, 64, 300, 5000])  # hash tables of every size, and none
def test_in_lists_of_any_size_agree(count: int) -> None:
    """IN lists of short literals go through a perfect hash table of (first bytes, length):
    literals that only differ by a trailing NUL or by length+byte must not be confused."""
    literals = ["EU", "EU\x00", "a\x00", "b", "", "\x00", "abcdefgh", "abcdefg"]
    literals += [f"v{i}" for i in range(count)]
    literals = literals[: max(count, 2)]
    others = ["EU\x00\x00", "c", "abcdefgh!", "v", None]
    values = [*literals, *others, *(f"v{i}" for i in range(0, 2 * count, 7))]
    lits = Literals([v.encode() for v in literals], False)
    array = _sliced(values, pa.string(), 1)
    got = _c_hits(array, lits)
    expected = _expected(values, literals, False)
    assert [g for g, e in zip(got, expected) if e is not None] == [e for e in expected if e is not None]


@pytest.mark.parametrize(
    "text",
    [
        "NOT (s = 'a' AND n > 1)",
        "NOT (s IN ('a', 'bb') OR n < 2)",
        "(s LIKE 'a%' OR n = 3) AND NOT (s <> 'bb' AND n >= 2)",
        "NOT (NOT (s = 'a' OR n > 2) AND s IN ('bb', ''))",
        "s = 'a' AND n > 1 OR NOT s IN ('bb', 'a')",
    ],
)
def test_unknown_rows_under_not_on_both_paths(text: str) -> None:
    """The plan computes known-false rows only under NOT; unknown (null) rows must stay unknown
    there, and every combination of null / non-null operands must answer like ``matches``."""
    values = [None, "a", "bb", "", "ab"]
    numbers = [None, 1, 2, 3]
    messages, rows = [], []
    for v in values:
        for x in numbers:
            m = TextMessage("x")
            if v is not None:
                m = with_properties(m, {"s": v})
            if x is not None:
                m.set_int_property("n", x)
            messages.append(m)
            rows.append((v, x))
    s = pa.array([v for v, _ in rows], pa.string())
    batch = pa.RecordBatch.from_arrays([s, pa.array([x for _, x in rows], pa.int32())], names=["s", "n"])
    sel = Selector(text)
    expected = [sel.matches(m) for m in messages]
    assert sel.evaluate_batch(batch).to_pylist() == expected
    with numpy_path():
        assert sel.evaluate_batch(batch).to_pylist() == expected
