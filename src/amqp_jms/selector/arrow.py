"""Vectorized selector evaluation over Arrow data with ``pyarrow.compute``.

Each header is a column named as the header (``JMSType``, ``JMSPriority``, ``JMSDeliveryMode``
as int 1/2 or as the strings, ...), each property a column named as the property; a null is an
absent property and a missing column is a property absent from every row. The column's Arrow type
is the property's JMS type: int8/int16/int32 (and uint8/uint16) are Java ``int``, int64 (uint32,
uint64, timestamp) ``long``, float32 ``float``, float64 ``double``, string ``String``, bool
``boolean``; other types (binary, ...) compare as unlike types.

The common selector shapes (comparisons of a column with a literal, ``IN``, prefix ``LIKE``,
``IS NULL`` and their AND/OR/NOT) run on a plan built once per selector that reads the Arrow
buffers with numpy (``arrow_plan.py``, ``arrow_strings.py``); what it does not cover is evaluated
here, by the walker below, and combined with it.

The AST is walked once per batch (not per row); values are ``(kind, array)`` pairs where kind
is the Java type, conditions are boolean arrays with null = unknown combined with Kleene
``and``/``or``; the final nulls become False. The result is identical, row by row, to
``Selector.matches`` on the same values (a hypothesis test holds the two together).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..types import Byte, Float, Int, Short
from .arrow_plan import plan_for
from .ast import (
    And,
    Arithmetic,
    Between,
    Compare,
    Identifier,
    In,
    IsNull,
    Like,
    Literal,
    Node,
    Not,
    Or,
    Unary,
    operands,
)
from .values import NUMERIC, B, D, F, I, L, N, O, S

__all__ = ["arrow_like_pattern", "evaluate_batch", "messages_to_batch", "rows_to_batch"]

_ARROW_TYPE = {I: pa.int32(), L: pa.int64(), F: pa.float32(), D: pa.float64(), S: pa.string(), B: pa.bool_()}
_LITERAL_KIND = {"int": I, "long": L, "float": F, "double": D, "string": S, "boolean": B}
_CMP = {
    "=": pc.equal,
    "<>": pc.not_equal,
    "<": pc.less,
    "<=": pc.less_equal,
    ">": pc.greater,
    ">=": pc.greater_equal,
}
_NULL_BOOL = pa.scalar(None, pa.bool_())

# (kind, value): value is an Array of the batch's length (a DictionaryArray for dictionary-encoded
# strings) or a Scalar for literals, which pyarrow.compute broadcasts.
Vec = tuple[str, Any]


def evaluate_batch(node: Node | None, batch: pa.RecordBatch | pa.Table) -> pa.BooleanArray:
    """One bool per row: whether ``node`` evaluates to TRUE (everything, if ``node`` is None)."""
    if isinstance(batch, pa.Table):
        parts = [evaluate_batch(node, b) for b in batch.to_batches()]
        return pa.concat_arrays(parts) if parts else pa.array([], pa.bool_())
    n = batch.num_rows
    if node is None:
        return pa.repeat(pa.scalar(True), n)
    plan = plan_for(node)
    if plan.fast:
        return plan.evaluate(batch, lambda part, rows: _Evaluator(rows).condition(part))
    result = _Evaluator(batch).condition(node)
    if isinstance(result, pa.Scalar):  # a constant selector (no identifiers)
        return pa.repeat(pa.scalar(result.as_py() is True), n)
    if result.null_count == 0:
        return result
    # unknown -> False; (x AND is_valid(x)) is ~200x faster than fill_null on booleans
    return pc.and_kleene(result, pc.is_valid(result))


_PY_TO_ARROW: dict[type, Any] = {
    bool: pa.bool_(),
    Byte: pa.int8(),
    Short: pa.int16(),
    Int: pa.int32(),
    int: pa.int64(),
    Float: pa.float32(),
    float: pa.float64(),
    str: pa.string(),
    bytes: pa.binary(),
}
HEADER_COLUMNS: dict[str, Any] = {
    "JMSDeliveryMode": pa.int32(),
    "JMSPriority": pa.int32(),
    "JMSMessageID": pa.string(),
    "JMSTimestamp": pa.int64(),
    "JMSCorrelationID": pa.string(),
    "JMSType": pa.string(),
}


def rows_to_batch(rows: list[dict[str, Any]], types: dict[str, Any] | None = None) -> pa.RecordBatch:
    """A RecordBatch from typed-value dicts (property/header name -> value, absent = null).

    A column's Arrow type comes from ``types`` or else from the class of its first non-null
    value (``Byte`` int8, ``Int`` int32, ``int`` int64, ``Float`` float32, ``str`` string ...);
    a column whose values have different JMS types raises ``TypeError`` (Arrow columns have one
    type; such data must be evaluated per message).
    """
    names: dict[str, None] = {}
    for row in rows:
        names.update(dict.fromkeys(row))
    arrays, fields = [], []
    for name in names:
        values = [row.get(name) for row in rows]
        t = (types or {}).get(name)
        if t is None:
            classes = {v.__class__ for v in values if v is not None}
            if len(classes) > 1:
                raise TypeError(f"column {name!r} mixes types {sorted(c.__name__ for c in classes)}")
            t = _PY_TO_ARROW.get(classes.pop(), None) if classes else pa.null()
            if t is None:
                raise TypeError(f"column {name!r}: no Arrow type for {type(values[0]).__name__}")
        arrays.append(pa.array(values, t))
        fields.append(pa.field(name, t))
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


def messages_to_batch(messages: list[Any]) -> pa.RecordBatch:
    """A RecordBatch of amqp_jms messages: the six selector headers and every property."""
    rows = []
    for m in messages:
        row: dict[str, Any] = {
            "JMSDeliveryMode": m.get_jms_delivery_mode(),
            "JMSPriority": m.get_jms_priority(),
            "JMSMessageID": m.get_jms_message_id(),
            "JMSTimestamp": m.get_jms_timestamp(),
            "JMSCorrelationID": m.get_jms_correlation_id(),
            "JMSType": m.get_jms_type(),
        }
        get = m.get_object_property
        for name in m.get_property_names():
            row[name] = get(name)
        rows.append(row)
    return rows_to_batch(rows, HEADER_COLUMNS)


def arrow_like_pattern(pattern: str, escape: str | None) -> str:
    """The selector LIKE pattern in Arrow's ``match_like`` syntax (backslash escapes)."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if escape is not None and c == escape and i + 1 < len(pattern):
            lit = pattern[i + 1]
            out.append("\\" + lit if lit in "%_\\" else lit)
            i += 2
            continue
        out.append("\\\\" if c == "\\" else c)
        i += 1
    return "".join(out)


def _column_kind(array: Any) -> Vec:
    t = array.type
    if pa.types.is_dictionary(t):
        vt = t.value_type
        if (pa.types.is_string(vt) or pa.types.is_large_string(vt)) and array.dictionary.null_count == 0:
            # kept encoded: string tests run on the (small) dictionary, then ``take`` the indices
            return S, pa.DictionaryArray.from_arrays(array.indices, pc.cast(array.dictionary, pa.string()))
        array = array.dictionary_decode()
        t = array.type
    if (
        pa.types.is_int8(t)
        or pa.types.is_int16(t)
        or pa.types.is_int32(t)
        or pa.types.is_uint8(t)
        or pa.types.is_uint16(t)
    ):
        return I, pc.cast(array, pa.int32())
    if pa.types.is_integer(t) or pa.types.is_timestamp(t):
        return L, pc.cast(array, pa.int64(), safe=False)
    if pa.types.is_float16(t) or pa.types.is_float32(t):
        return F, pc.cast(array, pa.float32())
    if pa.types.is_float64(t):
        return D, array
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return S, pc.cast(array, pa.string())
    if pa.types.is_boolean(t):
        return B, array
    if pa.types.is_null(t):
        return N, array
    return O, array


def _utf8(text: str) -> bool:
    """Whether Arrow can hold ``text``. A selector literal may carry a lone surrogate (Python str
    allows it), which no Arrow string (always valid UTF-8) can equal, contain or match."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _unencodable(x: Any) -> bool:
    """A string literal ``_utf8`` refused, as ``value()`` represents it."""
    return isinstance(x, pa.Scalar) and pa.types.is_binary(x.type)


def _plain(x: Any) -> Any:
    return x.dictionary_decode() if isinstance(x, pa.DictionaryArray) else x


def _on_strings(x: Any, fn: Any) -> Any:
    """``fn`` (a string -> bool kernel) over a string array. A dictionary-encoded array is tested
    once per distinct value; the rows then only compare small integer indices (nulls stay null)."""
    if not isinstance(x, pa.DictionaryArray):
        return fn(x)
    tested = fn(x.dictionary)
    hits = pc.indices_nonzero(pc.fill_null(tested, False)).cast(x.indices.type)
    if len(hits) == 0:
        return pc.equal(x.indices, pa.scalar(-1, x.indices.type))  # FALSE, or NULL for null rows
    if len(hits) <= 4:
        result = pc.equal(x.indices, hits[0])
        for h in hits[1:]:
            result = pc.or_(result, pc.equal(x.indices, h))
        return result
    return pc.take(tested, x.indices)


def _is_in(strings: Any, values: tuple[str, ...]) -> Any:
    """IN over a string array; nulls stay null. A few equality scans beat hashing every row."""
    if len(values) <= 6 and len(strings) > 64:
        hit = pc.equal(strings, values[0])
        for v in values[1:]:
            hit = pc.or_(hit, pc.equal(strings, v))
        return hit
    hit = pc.is_in(strings, value_set=pa.array(values, pa.string()))
    return pc.if_else(pc.is_valid(strings), hit, _NULL_BOOL)


class _Evaluator:
    def __init__(self, batch: pa.RecordBatch) -> None:
        self.batch = batch
        self.n = batch.num_rows
        self.names = set(batch.schema.names)

    def nulls(self) -> Any:
        return _NULL_BOOL

    def false_unless_null(self, *values: Any) -> Any:
        """FALSE where every value is non-null, else unknown (unlike types are compared)."""
        valid = None
        for x in values:
            v = pa.scalar(x.is_valid) if isinstance(x, pa.Scalar) else pc.is_valid(x)
            valid = v if valid is None else pc.and_(valid, v)
        return pc.if_else(valid, pa.scalar(False), _NULL_BOOL)

    # -- values -------------------------------------------------------------------------------
    def column(self, name: str) -> Vec:
        if name not in self.names:
            return N, _NULL_BOOL
        kind, array = _column_kind(self.batch.column(name))
        if name == "JMSDeliveryMode" and kind in (I, L):
            none = pa.scalar(None, pa.string())
            mode = pc.if_else(
                pc.equal(array, 2), "PERSISTENT", pc.if_else(pc.equal(array, 1), "NON_PERSISTENT", none)
            )
            return S, mode
        if name == "JMSPriority" and kind == L:
            return I, pc.cast(array, pa.int32(), safe=False)
        return kind, array

    def value(self, node: Node) -> Vec:
        if isinstance(node, Literal):
            kind = _LITERAL_KIND[node.kind]
            if isinstance(node.value, str) and not _utf8(node.value):
                # kept as binary so compare() can see it; it equals no column value
                return S, pa.scalar(node.value.encode("utf-8", "surrogatepass"), pa.binary())
            return kind, pa.scalar(node.value, _ARROW_TYPE[kind])
        if isinstance(node, Identifier):
            return self.column(node.name)
        if isinstance(node, Arithmetic):
            return self.arith(node.op, self.value(node.left), self.value(node.right))
        if isinstance(node, Unary):
            kind, x = self.value(node.operand)
            if kind not in NUMERIC:
                return N, _NULL_BOOL
            x = pc.cast(x, _ARROW_TYPE[kind])
            return kind, (pc.negate(x) if node.op == "-" else x)
        return B, self.condition(node)

    def arith(self, op: str, a: Vec, b: Vec) -> Vec:
        (ka, xa), (kb, xb) = a, b
        if ka not in NUMERIC or kb not in NUMERIC:
            return N, _NULL_BOOL
        k = D if D in (ka, kb) else F if F in (ka, kb) else L if L in (ka, kb) else I
        t = _ARROW_TYPE[k]
        xa, xb = pc.cast(xa, t, safe=False), pc.cast(xb, t, safe=False)
        if op == "+":
            return k, pc.add(xa, xb)
        if op == "-":
            return k, pc.subtract(xa, xb)
        if op == "*":
            return k, pc.multiply(xa, xb)
        if k in (F, D):
            return k, pc.divide(xa, xb)
        # Java: truncating division, MIN / -1 wraps to MIN; division by zero is NULL here
        zero, minus_one = pc.equal(xb, 0), pc.equal(xb, -1)
        safe = pc.if_else(pc.or_(zero, minus_one), pa.scalar(1, t), xb)
        quotient = pc.if_else(minus_one, pc.negate(xa), pc.divide(xa, safe))
        return k, pc.if_else(zero, pa.scalar(None, t), quotient)

    def compare(self, op: str, a: Vec, b: Vec) -> Any:
        (ka, xa), (kb, xb) = a, b
        if ka == N or kb == N:
            return _NULL_BOOL
        if ka in NUMERIC and kb in NUMERIC:
            k = D if D in (ka, kb) else F if F in (ka, kb) else L if L in (ka, kb) else I
            t = _ARROW_TYPE[k]
            return _CMP[op](pc.cast(xa, t, safe=False), pc.cast(xb, t, safe=False))
        if ka == kb == S and op in ("=", "<>") and (_unencodable(xa) or _unencodable(xb)):
            if isinstance(xa, pa.Scalar) and isinstance(xb, pa.Scalar):
                return pa.scalar((xa.as_py() == xb.as_py()) == (op == "="))
            never = self.false_unless_null(xb if isinstance(xa, pa.Scalar) else xa)
            return never if op == "=" else pc.invert(never)
        if ka == kb and ka in (S, B) and op in ("=", "<>"):
            fn = _CMP[op]
            if ka == B and isinstance(xb, pa.Scalar) and xb.is_valid:
                return xa if (xb.as_py() is True) == (op == "=") else pc.invert(xa)
            if isinstance(xb, pa.Scalar):
                return _on_strings(xa, lambda d: fn(d, xb))
            if isinstance(xa, pa.Scalar):
                return _on_strings(xb, lambda d: fn(xa, d))
            return fn(_plain(xa), _plain(xb))
        return self.false_unless_null(xa, xb)

    # -- conditions ---------------------------------------------------------------------------
    def condition(self, node: Node) -> Any:
        if isinstance(node, (And, Or)):
            combine = pc.and_kleene if isinstance(node, And) else pc.or_kleene
            terms = operands(node)  # a chain, not recursion
            result = self.condition(terms[0])
            for term in terms[1:]:
                result = combine(result, self.condition(term))
            return result
        if isinstance(node, Not):
            return pc.invert(self.condition(node.operand))
        if isinstance(node, Compare):
            return self.compare(node.op, self.value(node.left), self.value(node.right))
        if isinstance(node, Between):
            x, lo, hi = self.value(node.operand), self.value(node.low), self.value(node.high)
            if node.negated:
                return pc.or_kleene(self.compare("<", x, lo), self.compare(">", x, hi))
            return pc.and_kleene(self.compare(">=", x, lo), self.compare("<=", x, hi))
        if isinstance(node, IsNull):
            _, x = self.column(node.identifier.name)
            if isinstance(x, pa.Scalar):
                return pa.scalar(x.is_valid == node.negated)
            return pc.is_valid(x) if node.negated else pc.is_null(x)
        if isinstance(node, (In, Like)):
            kind, x = self.column(node.identifier.name)
            if kind == S:
                if isinstance(node, In):
                    values = tuple(v for v in node.values if _utf8(v))
                    hit = _on_strings(x, lambda d: _is_in(d, values)) if values else self.false_unless_null(x)
                else:
                    pattern = arrow_like_pattern(node.pattern, node.escape)
                    if _utf8(pattern):
                        hit = _on_strings(x, lambda d: pc.match_like(d, pattern))
                    else:
                        hit = self.false_unless_null(x)
            elif kind == N or isinstance(node, In):  # IN on a non-String is unknown (TCK)
                hit = _NULL_BOOL
            else:
                hit = self.false_unless_null(x)
            return pc.invert(hit) if node.negated else hit
        kind, x = self.value(node)
        if kind == B:
            return x
        return _NULL_BOOL
