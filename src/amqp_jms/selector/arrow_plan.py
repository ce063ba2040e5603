"""A vectorized plan for the common selector shapes: numpy three-valued masks over Arrow buffers.

``pyarrow.compute`` costs about 1 ns per row per kernel call on numbers (a comparison writes a
bitmap; every Kleene ``and``/``or`` another) and 3-20 ns on strings. The selectors people write
are mostly conjunctions and disjunctions of ``column <op> literal``, ``IN``, prefix ``LIKE`` and
``IS NULL``; for those, this plan reads the column's buffers with numpy and carries each condition
as two bool arrays, ``T`` (known true) and ``F`` (known false; None means "not T", i.e. no unknown
row), so that SQL's three-valued logic is a couple of byte-wide ``&``/``|`` per row:

- ``NOT (T, F)`` is ``(F, T)``;
- ``AND``: ``T = T1 & T2``, ``F = F1 | F2``; ``OR``: ``T = T1 | T2``, ``F = F1 & F2``;
- a comparison on a column with validity ``V``: ``T = V & cmp``, ``F = V & ~cmp``;
- the selector matches where ``T``.

``F`` is only needed under a ``NOT``: the root, and AND/OR chains not under a ``NOT``, compute
``T`` alone (``_Batch.need_f``), which saves the ``F`` arrays and their combination.

Leaves:

- string ``=``/``<>`` a literal, ``[NOT] IN``, ``[NOT] LIKE`` whose pattern is a literal or a
  literal followed by ``%``: UTF-8 bytes compared in ``arrow_strings``; the equalities of one
  ``OR`` chain on the same column are fused into one ``IN``;
- numeric column ``<op>`` numeric literal (and ``BETWEEN`` literals): numpy compares in the type
  Java's binary numeric promotion gives (both sides cast exactly as ``arrow.py`` casts them);
- boolean column ``=``/``<>`` a boolean literal, or the column alone; ``IS [NOT] NULL``.

Every other node (arithmetic, unlike-type comparisons, general LIKE patterns, the
``JMSDeliveryMode``/``JMSPriority`` headers that need mapping, and a leaf whose column turns out
to have another Arrow type than the fast path reads) is evaluated by the ``pyarrow.compute``
walker in ``arrow.py`` and its result converted to ``(T, F)``; so the plan changes speed, never
answers, and a hypothesis test holds it to ``Selector.matches`` row by row.

The plan is built once per selector AST (``plan_for``), not per batch; nothing computed from a
batch's data outlives that batch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import reduce
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .arrow_strings import Literals, array_hits
from .ast import And, Between, Compare, Identifier, In, IsNull, Like, Literal, Node, Not, Or, operands
from .values import CMP_OPS

__all__ = ["Plan", "plan_for"]

# (T, F): known-true rows, known-false rows (None: every row not in T)
Tri = tuple[Any, Any]
# (node, batch) -> pyarrow BooleanArray (nulls = unknown) or Scalar: the walker of ``arrow.py``
Fallback = Callable[[Node, pa.RecordBatch], Any]

# Rows evaluated per pass: the plan's temporaries (a few bytes to 8 bytes per row each) then stay
# in the CPU caches; a 10^6-row batch in one pass ran 2-5x slower per row than in 10^5-row slices.
_CHUNK = 1 << 17

_SPECIAL = frozenset({"JMSDeliveryMode", "JMSPriority"})  # columns ``arrow.py`` maps first
_FLIP = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_NP_CMP: dict[str, Callable[[Any, Any], Any]] = CMP_OPS  # the same operators work on numpy arrays
_PLAIN_STRINGS = frozenset({pa.string().id, pa.large_string().id})
_DICTIONARY = pa.dictionary(pa.int32(), pa.string()).id
_LIT_KIND = {"int": "I", "long": "L", "float": "F", "double": "D"}
_DTYPE: dict[str, Any] = {
    "I": np.dtype(np.int32),
    "L": np.dtype(np.int64),
    "F": np.dtype(np.float32),
    "D": np.dtype(np.float64),
}


def _promote(a: str, b: str) -> str:
    for k in ("D", "F", "L"):
        if k in (a, b):
            return k
    return "I"


_NUMERIC: dict[Any, tuple[str, Any]] = {
    pa.int8(): ("I", np.dtype(np.int8)),
    pa.int16(): ("I", np.dtype(np.int16)),
    pa.int32(): ("I", np.dtype(np.int32)),
    pa.uint8(): ("I", np.dtype(np.uint8)),
    pa.uint16(): ("I", np.dtype(np.uint16)),
    pa.int64(): ("L", np.dtype(np.int64)),
    pa.uint32(): ("L", np.dtype(np.uint32)),
    pa.uint64(): ("L", np.dtype(np.uint64)),
    pa.float32(): ("F", np.dtype(np.float32)),
    pa.float64(): ("D", np.dtype(np.float64)),
}  # Arrow type -> (the Java kind ``arrow.py`` reads it as, its numpy dtype)


def _bits(buf: Any, offset: int, n: int) -> Any:
    """Bits ``offset .. offset+n`` of an Arrow bitmap as a fresh numpy bool array."""
    first = offset >> 3
    skip = offset & 7
    raw = np.frombuffer(buf, np.uint8, (skip + n + 7) >> 3, first)
    return np.unpackbits(raw, count=skip + n, bitorder="little")[skip:].view(np.bool_)


def _validity(array: Any) -> Any:
    """The array's validity as numpy bools, or None when no row is null."""
    if array.null_count == 0:
        return None
    return _bits(array.buffers()[0], array.offset, len(array))


def _tri(cmp: Any, valid: Any, need_f: bool = True) -> Tri:
    """(T, F) of a two-valued result on rows that are valid (the others unknown); F left out
    (None) when ``need_f`` is false."""
    if valid is None:
        return cmp, None
    if not need_f:
        cmp &= valid
        return cmp, None
    false = np.logical_not(cmp)
    false &= valid
    cmp &= valid
    return cmp, false


class _Batch:
    """One batch being evaluated: column lookup and the fallback to the Arrow walker."""

    __slots__ = ("alive", "batch", "columns", "fallback", "n", "need_f", "schema")

    def __init__(self, batch: pa.RecordBatch, fallback: Fallback) -> None:
        self.alive: Any = None  # rows whose answer still matters (None: all), set by chains
        # whether the caller uses F (known false); when not, a node may return F = None whatever
        # its unknown rows: AND and OR compute T from their terms' T alone, only NOT needs F
        self.need_f = True
        self.batch = batch
        self.schema = batch.schema
        self.n = batch.num_rows
        self.fallback = fallback
        self.columns: dict[str, Any] = {}

    def column(self, name: str) -> Any:
        """The column called ``name`` (None if the batch has none: absent from every row)."""
        array = self.columns.get(name)
        if array is None:
            i = self.schema.get_field_index(name)
            if i < 0:
                if self.schema.get_all_field_indices(name):
                    self.batch.column(name)  # a duplicated name: raises KeyError like arrow.py
                return None
            array = self.columns[name] = self.batch.column(i)
        return array

    def unknown(self) -> Tri:
        return np.zeros(self.n, np.bool_), np.zeros(self.n, np.bool_)

    def const(self, value: bool | None) -> Tri:
        if value is None:
            return self.unknown()
        t = np.full(self.n, value, np.bool_)
        return t, None

    def slow(self, node: Node) -> Tri:
        """``node`` through the Arrow walker, as (T, F)."""
        result = self.fallback(node, self.batch)
        if isinstance(result, pa.Scalar):
            return self.const(result.as_py())
        values = _bits(result.buffers()[1], result.offset, len(result))
        return _tri(values, _validity(result), self.need_f)


class _Leaf:
    """A plan node; ``node`` is the AST it answers for (evaluated by the walker if need be).

    ``b.alive``, when set, lists the rows whose answer still matters: a node may leave the
    others unread and give them any value (the enclosing AND/OR has decided them)."""

    __slots__ = ("node",)

    def __init__(self, node: Node) -> None:
        self.node = node

    @property
    def costly(self) -> bool:
        """Whether it reads less when told which rows are alive (string tests do)."""
        return False

    def run(self, b: _Batch) -> Tri:
        return b.slow(self.node)


class _Strings(_Leaf):
    """``name`` equals one of ``values`` / starts with one (``prefix``), ``negated``: NOT of it."""

    __slots__ = ("lits", "name", "negated", "values")

    @property
    def costly(self) -> bool:
        return True

    def __init__(self, node: Node, name: str, values: list[str], prefix: bool, negated: bool) -> None:
        super().__init__(node)
        self.name, self.values, self.negated = name, values, negated
        encoded = []
        for v in values:
            try:
                encoded.append(v.encode("utf-8"))
            except UnicodeEncodeError:  # a lone surrogate: equals (starts) no Arrow string
                pass
        self.lits = Literals(encoded, prefix)

    def run(self, b: _Batch) -> Tri:
        array = b.column(self.name)
        if array is None:
            return b.unknown()
        t = array.type
        if t.id not in _PLAIN_STRINGS:
            if t == pa.null():
                return b.unknown()
            if pa.types.is_string_view(t):
                array = pc.cast(array, pa.string())
            elif not pa.types.is_dictionary(t):
                return b.slow(self.node)  # unlike types: arrow.py knows the answer
        hit = self._encoded(array) if array.type.id == _DICTIONARY else _plain(array, self.lits, b.alive)
        if hit is None:
            return b.slow(self.node)
        t, f = _tri(hit, _validity(array), b.need_f or self.negated)
        if self.negated:
            return (np.logical_not(t), None) if f is None else (f, t)
        return t, f

    def _encoded(self, array: Any) -> Any:
        """Rows of a dictionary-encoded array: the dictionary tested once, then its indices."""
        dictionary = array.dictionary
        if dictionary.null_count or dictionary.type.id not in _PLAIN_STRINGS:
            return None
        tested = _plain(dictionary, self.lits)
        if tested is None:
            return None
        indices = array.indices
        dtype = np.dtype(indices.type.to_pandas_dtype())
        idx = np.frombuffer(indices.buffers()[1], dtype, len(indices), indices.offset * dtype.itemsize)
        found = tested.nonzero()[0]
        if len(found) <= 4:
            hit = np.zeros(len(idx), np.bool_)
            for h in found:
                hit |= idx == h
            return hit
        return tested.take(idx, mode="clip")  # null slots may hold any index


def _plain(array: Any, lits: Literals, alive: Any = None) -> Any:
    return array_hits(array, lits, alive)


class _Numeric(_Leaf):
    """Numeric column ``op`` numeric literal, compared after Java's binary numeric promotion."""

    __slots__ = ("cmp", "kind", "name", "seen", "value")

    def __init__(self, node: Node, name: str, op: str, literal: Literal) -> None:
        super().__init__(node)
        self.name, self.cmp = name, _NP_CMP[op]
        self.kind = _LIT_KIND[literal.kind]
        value: Any = literal.value
        self.value: Any = np.array(value, _DTYPE[self.kind])
        # Arrow type id -> (its numpy dtype, the casts to apply, the literal in the promoted type)
        self.seen: dict[int, tuple[Any, list[Any], Any]] = {}

    def run(self, b: _Batch) -> Tri:
        array = b.column(self.name)
        if array is None:
            return b.unknown()
        t = array.type
        known = self.seen.get(t.id)
        if known is None:
            kind_dtype = _NUMERIC.get(t)
            if kind_dtype is None:
                return b.unknown() if t == pa.null() else b.slow(self.node)
            kind, dtype = kind_dtype
            k = _promote(kind, self.kind)
            # the column as arrow.py reads it (int32 for Java int, int64 for long: uint64 wraps),
            # then both sides in the promoted type (the literal cast like a one-element array)
            steps: list[Any] = []
            for d in (_DTYPE[kind], _DTYPE[k]):
                if d != (steps[-1] if steps else dtype):
                    steps.append(d)
            known = self.seen[t.id] = (dtype, steps, self.value.astype(_DTYPE[k])[()])
        dtype, steps, lit = known
        x = np.frombuffer(array.buffers()[1], dtype, len(array), array.offset * dtype.itemsize)
        for step in steps:
            x = x.astype(step)
        return _tri(self.cmp(x, lit), _validity(array), b.need_f)


class _Bool(_Leaf):
    """Boolean column ``= value`` (``<>``: ``equal`` False), or the column alone (value True)."""

    __slots__ = ("equal", "name", "value")

    def __init__(self, node: Node, name: str, value: bool, equal: bool) -> None:
        super().__init__(node)
        self.name, self.value, self.equal = name, value, equal

    def run(self, b: _Batch) -> Tri:
        array = b.column(self.name)
        if array is None or pa.types.is_null(array.type):
            return b.unknown()
        if not pa.types.is_boolean(array.type):
            return b.slow(self.node)
        values = _bits(array.buffers()[1], array.offset, len(array))
        if self.value != self.equal:
            np.logical_not(values, out=values)
        return _tri(values, _validity(array), b.need_f)


class _IsNull(_Leaf):
    __slots__ = ("name", "negated")

    def __init__(self, node: Node, name: str, negated: bool) -> None:
        super().__init__(node)
        self.name, self.negated = name, negated

    def run(self, b: _Batch) -> Tri:
        array = b.column(self.name)
        if array is None:
            return b.const(not self.negated)
        if pa.types.is_dictionary(array.type) and array.dictionary.null_count:
            return b.slow(self.node)
        valid = _validity(array) if not pa.types.is_null(array.type) else np.zeros(b.n, np.bool_)
        if valid is None:
            return b.const(self.negated)
        return (valid, None) if self.negated else (np.logical_not(valid), None)


class _Not(_Leaf):
    __slots__ = ("term",)

    def __init__(self, node: Node, term: _Leaf) -> None:
        super().__init__(node)
        self.term = term

    @property
    def costly(self) -> bool:
        return self.term.costly

    def run(self, b: _Batch) -> Tri:
        need_f, b.need_f = b.need_f, True
        t, f = self.term.run(b)
        b.need_f = need_f
        return (np.logical_not(t), None) if f is None else (f, t)


class _Chain(_Leaf):
    """An AND (``both``) or OR chain. Every node returns fresh arrays, so the first term's are
    updated in place.

    The terms run cheapest first (AND and OR are commutative in three-valued logic too), and a
    string test after them only reads the rows still undecided: for AND those not already known
    false, for OR those not already known true. That is the short-circuit the per-message code
    gets from Python's ``and``/``or``, done per row."""

    __slots__ = ("both", "terms")

    def __init__(self, node: Node, terms: list[_Leaf], both: bool) -> None:
        super().__init__(node)
        self.terms, self.both = sorted(terms, key=lambda term: term.costly), both

    @property
    def costly(self) -> bool:
        return any(term.costly for term in self.terms)

    def run(self, b: _Batch) -> Tri:
        if not b.need_f:
            return self._t_only(b)
        outer = b.alive
        t, f = self.terms[0].run(b)
        on_t, on_f = (np.logical_and, np.logical_or) if self.both else (np.logical_or, np.logical_and)
        for term in self.terms[1:]:
            if term.costly:
                if self.both:
                    live = t if f is None else np.logical_not(f)
                else:
                    live = np.logical_not(t)
                b.alive = live if outer is None else np.logical_and(live, outer)
            t2, f2 = term.run(b)
            b.alive = outer
            if f is not None or f2 is not None:
                if f is None:
                    f = np.logical_not(t)
                on_f(f, np.logical_not(t2) if f2 is None else f2, out=f)
            on_t(t, t2, out=t)
        return t, f

    def _t_only(self, b: _Batch) -> Tri:
        """T alone (the caller does not use F): T of AND/OR depends only on the terms' T, and a
        row still matters to an AND where T holds so far (unknown is as good as false when only
        T counts), to an OR where it does not."""
        outer = b.alive
        t, _ = self.terms[0].run(b)
        on_t = np.logical_and if self.both else np.logical_or
        for term in self.terms[1:]:
            if term.costly:
                live = t if self.both else np.logical_not(t)
                b.alive = live if outer is None else np.logical_and(live, outer)
            t2, _ = term.run(b)
            b.alive = outer
            on_t(t, t2, out=t)
        return t, None


def _root_batch(batch: pa.RecordBatch, fallback: Fallback) -> _Batch:
    b = _Batch(batch, fallback)
    b.need_f = False  # the selector matches where T: the root's F is never used
    return b


class Plan:
    """A selector compiled for ``evaluate``: fast leaves where the shape allows, else None."""

    __slots__ = ("root",)

    def __init__(self, node: Node) -> None:
        self.root = _compile(node)

    @property
    def fast(self) -> bool:
        """Whether any part of the selector runs on the fast path (else use the walker alone)."""
        return type(self.root) is not _Leaf

    def evaluate(self, batch: pa.RecordBatch, fallback: Fallback) -> pa.BooleanArray:
        n = batch.num_rows
        if n <= _CHUNK:
            t, _ = self.root.run(_root_batch(batch, fallback))
        else:
            t = np.concatenate(
                [self.root.run(_root_batch(batch.slice(i, _CHUNK), fallback))[0] for i in range(0, n, _CHUNK)]
            )
        bits = np.packbits(t, bitorder="little")
        return pa.BooleanArray.from_buffers(pa.bool_(), len(t), [None, pa.py_buffer(bits)])


def _name(node: Node) -> str | None:
    if isinstance(node, Identifier) and node.name not in _SPECIAL:
        return node.name
    return None


def _like_form(pattern: str, escape: str | None) -> tuple[str, bool] | None:
    """(literal, prefix) when the pattern is a literal (``prefix`` False) or a literal followed by
    ``%`` only; None for any other pattern (``_`` or an inner ``%``)."""
    out: list[str] = []
    i, rest = 0, False
    while i < len(pattern):
        c = pattern[i]
        if escape is not None and c == escape and i + 1 < len(pattern):
            if rest:
                return None
            out.append(pattern[i + 1])
            i += 2
            continue
        if c == "%":
            rest = True
        elif c == "_" or rest:
            return None
        else:
            out.append(c)
        i += 1
    return "".join(out), rest


def _leaf(node: Node) -> _Leaf:
    """The fast leaf for ``node``, or a walker leaf."""
    if isinstance(node, Compare):
        left, right, op = node.left, node.right, str(node.op)
        if isinstance(left, Literal) and isinstance(right, Identifier):
            left, right, op = right, left, _FLIP[op]
        name = _name(left)
        if name is None or not isinstance(right, Literal):
            return _Leaf(node)
        if isinstance(right.value, str) and op in ("=", "<>"):
            return _Strings(node, name, [right.value], False, op == "<>")
        if isinstance(right.value, bool) and op in ("=", "<>"):
            return _Bool(node, name, right.value, op == "=")
        if right.kind in _LIT_KIND:
            return _Numeric(node, name, op, right)
        return _Leaf(node)
    if isinstance(node, In):
        name = _name(node.identifier)
        if name is not None:
            return _Strings(node, name, list(node.values), False, node.negated)
    if isinstance(node, Like):
        name = _name(node.identifier)
        form = _like_form(node.pattern, node.escape)
        if name is not None and form is not None:
            return _Strings(node, name, [form[0]], form[1], node.negated)
    if isinstance(node, IsNull):
        name = _name(node.identifier)
        if name is not None:
            return _IsNull(node, name, node.negated)
    if isinstance(node, Identifier) and _name(node) is not None:
        return _Bool(node, node.name, True, True)
    if isinstance(node, Between):
        name = _name(node.operand)
        lo, hi = node.low, node.high
        if (
            name is not None
            and isinstance(lo, Literal)
            and isinstance(hi, Literal)
            and lo.kind in _LIT_KIND
            and hi.kind in _LIT_KIND
        ):
            if node.negated:
                parts = [_Numeric(node, name, "<", lo), _Numeric(node, name, ">", hi)]
            else:
                parts = [_Numeric(node, name, ">=", lo), _Numeric(node, name, "<=", hi)]
            return _Chain(node, list(parts), both=not node.negated)
    return _Leaf(node)


def _fuse_equalities(node: Or, terms: list[_Leaf]) -> list[_Leaf]:
    """``c = 'a' OR c = 'b' OR c IN ('d')`` -> one ``c IN ('a', 'b', 'd')`` (OR is associative
    and commutative in three-valued logic, and each term is unknown exactly where c is null)."""
    def fusable(term: _Leaf) -> bool:
        return isinstance(term, _Strings) and not term.negated and not term.lits.prefix

    groups: dict[str, list[_Strings]] = {}
    for term in terms:
        if isinstance(term, _Strings) and fusable(term):
            groups.setdefault(term.name, []).append(term)
    out: list[_Leaf] = []
    for term in terms:
        if not isinstance(term, _Strings) or not fusable(term):
            out.append(term)
            continue
        group = groups.pop(term.name, None)
        if group is None:
            continue  # already part of the fused term
        if len(group) == 1:
            out.append(term)
        else:
            values = [v for g in group for v in g.values]
            out.append(_Strings(reduce(Or, [g.node for g in group]), term.name, values, False, False))
    return out


def _compile(node: Node) -> _Leaf:
    if isinstance(node, (And, Or)):
        terms = [_compile(t) for t in operands(node)]
        if isinstance(node, Or):
            terms = _fuse_equalities(node, terms)
        if len(terms) == 1:
            return terms[0]
        if all(type(t) is _Leaf for t in terms):
            return _Leaf(node)  # nothing fast inside: one walk of the whole subtree
        return _Chain(node, terms, both=isinstance(node, And))
    if isinstance(node, Not):
        term = _compile(node.operand)
        return _Leaf(node) if type(term) is _Leaf else _Not(node, term)
    return _leaf(node)


_PLANS: dict[int, tuple[Node, Plan]] = {}
_PLANS_LOCK = threading.Lock()
_MAX_PLANS = 256


def plan_for(node: Node) -> Plan:
    """The plan of ``node``, built on first use; kept for the last few hundred ASTs (keyed by
    identity: a Selector keeps its AST, so its plan is built once)."""
    entry = _PLANS.get(id(node))
    if entry is not None and entry[0] is node:
        return entry[1]
    plan = Plan(node)
    with _PLANS_LOCK:  # evaluate_batch may run on several threads (Spark's Python workers do)
        while len(_PLANS) >= _MAX_PLANS:
            _PLANS.pop(next(iter(_PLANS)))
        _PLANS[id(node)] = (node, plan)
    return plan
