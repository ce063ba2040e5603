"""Property tests: random selectors over random typed messages.

- ``matches``, ``matches_lookup``, ``evaluate_batch`` and a plain tree-walking reference
  evaluator give the same result on every row;
- ``str(ast)`` is canonical selector text that parses back to the same AST;
- nothing but ``InvalidSelectorException`` ever escapes the parser.
"""

from __future__ import annotations

import math
import string
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from amqp_jms.exceptions import InvalidSelectorException
from amqp_jms.message import Message, TextMessage
from amqp_jms.message._data import view
from amqp_jms.selector import (
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
    Selector,
    Unary,
)
from amqp_jms.selector.arrow import messages_to_batch
from amqp_jms.selector.compiler import like_regex
from amqp_jms.selector.values import arith, compare, delivery_mode, negate
from amqp_jms.testing.messages import with_properties
from amqp_jms.types import Byte, Float, Int, Short

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

PROPS = ["a", "b", "c", "d", "e"]
HEADERS = ["JMSPriority", "JMSType", "JMSDeliveryMode", "JMSTimestamp"]
TYPES = ["boolean", "byte", "short", "int", "long", "float", "double", "string"]
ALPHABET = "ab%_!\\\n'é"


# values where Java's numeric promotion matters (int->float and long->double round)
TRICKY_INTS = [16777217, 2**24, 2**53 + 1, 2**53, 2**62 + 1, 3]
TRICKY_FLOATS = [16777216.0, 9007199254740992.0, 1.1, float(Float(1.1)), 4.6116860184273879e18, 0.5, 3.0]


def _ints(lo: int, hi: int) -> st.SearchStrategy[int]:
    tricky = [v for v in TRICKY_INTS if lo <= v <= hi]
    return st.one_of(st.sampled_from([lo, hi, 0, 1, -1, 2, *tricky]), st.integers(lo, hi))


VALUES: dict[str, st.SearchStrategy[Any]] = {
    "boolean": st.booleans(),
    "byte": _ints(-128, 127).map(Byte),
    "short": _ints(-(2**15), 2**15 - 1).map(Short),
    "int": _ints(-(2**31), 2**31 - 1).map(Int),
    "long": _ints(-(2**63), 2**63 - 1),
    "float": st.one_of(st.floats(width=32), st.sampled_from(TRICKY_FLOATS)).map(Float),
    "double": st.one_of(st.floats(), st.sampled_from(TRICKY_FLOATS)),
    "string": st.text(ALPHABET, max_size=4),
}


@st.composite
def messages(draw: st.DrawFn) -> list[Message]:
    schema = {name: draw(st.sampled_from(TYPES)) for name in PROPS}
    out: list[Message] = []
    for _ in range(draw(st.integers(1, 6))):
        m = TextMessage("x")
        for name, t in schema.items():
            if draw(st.integers(0, 4)):  # mostly present
                m = with_properties(m, {name: draw(VALUES[t])})
        m.set_jms_priority(draw(st.integers(0, 9)))
        m.set_jms_delivery_mode(draw(st.sampled_from([1, 2])))
        m.set_jms_type(draw(st.one_of(st.none(), st.text("ab", max_size=2))))
        m.set_jms_timestamp(draw(_ints(0, 2**63 - 1)))
        out.append(m)
    return out


identifiers = st.sampled_from(PROPS + HEADERS).map(Identifier)
numeric_literals = st.one_of(
    st.integers(-(2**31), 2**31 - 1).map(lambda v: Literal(v, "int")),
    _ints(-(2**63), 2**63 - 1).map(lambda v: Literal(v, "long")),
    st.floats(width=32, allow_nan=False, allow_infinity=False).map(lambda v: Literal(float(v), "float")),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda v: Literal(v, "double")),
    st.sampled_from([0, 1, 2, -1, 127, 16777217]).map(lambda v: Literal(v, "int")),
    st.sampled_from(TRICKY_INTS).map(lambda v: Literal(v, "long")),
    st.sampled_from(TRICKY_FLOATS).map(lambda v: Literal(v, "double")),
    st.sampled_from(TRICKY_FLOATS).map(lambda v: Literal(float(Float(v)), "float")),
)
strings = st.text(ALPHABET, max_size=3)
numbers = st.recursive(
    st.one_of(numeric_literals, identifiers),
    lambda inner: st.one_of(
        st.builds(Unary, st.sampled_from(["+", "-"]), inner),
        st.builds(Arithmetic, st.sampled_from(["+", "-", "*", "/"]), inner, inner),
    ),
    max_leaves=4,
)


def _dangling(pattern: str, escape: str | None) -> bool:
    i = 0
    while i < len(pattern):
        if pattern[i] == escape:
            if i + 1 == len(pattern):
                return True
            i += 1
        i += 1
    return False


def _boolean_vs_number(c: Compare) -> bool:
    """``TRUE = 0``: refused when the selector is created (Jakarta Messaging TCK)."""
    is_bool = isinstance(c.left, Literal) and c.left.kind == "boolean"
    is_string = isinstance(c.right, Literal) and c.right.kind == "string"
    is_num = not isinstance(c.right, Identifier) and not is_string
    return is_bool and is_num


predicates = st.one_of(
    st.builds(Compare, st.sampled_from(["=", "<>", "<", "<=", ">", ">="]), numbers, numbers),
    st.builds(
        Compare,
        st.sampled_from(["=", "<>"]),
        st.one_of(identifiers, strings.map(lambda s: Literal(s, "string")), st.booleans().map(
            lambda b: Literal(b, "boolean"))),
        st.one_of(identifiers, strings.map(lambda s: Literal(s, "string")), numbers),
    ).filter(lambda c: not _boolean_vs_number(c)),
    st.builds(Between, numbers, numbers, numbers, st.booleans()),
    st.builds(In, identifiers, st.lists(strings, min_size=1, max_size=3).map(tuple), st.booleans()),
    st.builds(Like, identifiers, st.text(ALPHABET, max_size=4), st.sampled_from([None, "!", "\\", "%", "_"]),
              st.booleans()).filter(lambda n: not _dangling(n.pattern, n.escape)),
    st.builds(IsNull, identifiers, st.booleans()),
    identifiers,
    st.booleans().map(lambda b: Literal(b, "boolean")),
)
conditions = st.recursive(
    predicates,
    lambda inner: st.one_of(
        st.builds(And, inner, inner),
        st.builds(Or, inner, inner),
        st.builds(Not, inner),
        st.builds(Compare, st.sampled_from(["=", "<>"]), inner, inner),
    ),
    max_leaves=6,
)


# -- an independent, deliberately naive reference: walk the tree per message -------------------
def reference(node: Node, get: Any) -> object:
    if isinstance(node, Literal):
        return {"int": Int, "float": Float}.get(node.kind, lambda v: v)(node.value)
    if isinstance(node, Identifier):
        v = get(node.name)
        if node.name == "JMSDeliveryMode":
            return delivery_mode(v)
        if node.name == "JMSPriority" and v is not None:
            return Int(v)
        return v
    if isinstance(node, Unary):
        return negate(node.op, reference(node.operand, get))
    if isinstance(node, Arithmetic):
        return arith(node.op, reference(node.left, get), reference(node.right, get))
    if isinstance(node, Compare):
        return compare(node.op, reference(node.left, get), reference(node.right, get))
    if isinstance(node, Not):
        v = reference(node.operand, get)
        return (not v) if isinstance(v, bool) else None
    if isinstance(node, (And, Or)):
        a, b = reference(node.left, get), reference(node.right, get)
        a = a if isinstance(a, bool) else None
        b = b if isinstance(b, bool) else None
        if isinstance(node, And):
            return False if False in (a, b) else None if None in (a, b) else True
        return True if True in (a, b) else None if None in (a, b) else False
    if isinstance(node, Between):
        x, lo, hi = (reference(n, get) for n in (node.operand, node.low, node.high))
        if node.negated:
            return _or(compare("<", x, lo), compare(">", x, hi))
        return _and(compare(">=", x, lo), compare("<=", x, hi))
    if isinstance(node, IsNull):
        return (get(node.identifier.name) is None) != node.negated
    if isinstance(node, (In, Like)):
        v = reference(node.identifier, get)
        if v is None:
            return None
        if isinstance(node, In):
            if not isinstance(v, str):
                return None  # IN on a non-String is unknown (Jakarta Messaging TCK)
            hit = v in node.values
        else:
            hit = isinstance(v, str) and like_regex(node.pattern, node.escape).fullmatch(v) is not None
        return hit != node.negated
    raise AssertionError(node)


def _and(a: bool | None, b: bool | None) -> bool | None:
    return False if False in (a, b) else None if None in (a, b) else True


def _or(a: bool | None, b: bool | None) -> bool | None:
    return True if True in (a, b) else None if None in (a, b) else False


def arrow_variants(batch: pa.RecordBatch) -> list[pa.RecordBatch | pa.Table]:
    """The batch as built, with its string columns dictionary-encoded, and as a chunked Table."""
    encoded = pa.RecordBatch.from_arrays(
        [pc.dictionary_encode(c) if pa.types.is_string(c.type) else c for c in batch.columns],
        names=batch.schema.names,
    )
    half = batch.num_rows // 2
    table = pa.Table.from_batches([batch.slice(0, half), batch.slice(half)])
    return [batch, encoded, table]


def large_variants(batch: pa.RecordBatch, times: int = 20) -> list[pa.RecordBatch]:
    """The rows repeated ``times`` times, plain and encoded (big batches take other kernels)."""
    big = pa.Table.from_batches([batch] * times).combine_chunks().to_batches()[0]
    return [big, arrow_variants(big)[1]]


def lookup(m: Message) -> Any:
    values = dict(view(m).properties)
    values.update(JMSPriority=m.get_jms_priority(), JMSType=m.get_jms_type(),
                  JMSDeliveryMode=m.get_jms_delivery_mode(), JMSTimestamp=m.get_jms_timestamp(),
                  JMSMessageID=m.get_jms_message_id(), JMSCorrelationID=m.get_jms_correlation_id())
    return values.get


def _message_with(**props: Any) -> Message:
    m = TextMessage("x")
    m = with_properties(m, props)
    return m


@SETTINGS
@given(conditions, messages())
@example(Not(Identifier("a")), [_message_with(a=Byte(0)), _message_with(a=Byte(1)), _message_with()])
def test_all_evaluators_agree_row_by_row(ast: Node, msgs: list[Message]) -> None:
    s = Selector(str(ast))
    per_message = [s.matches(m) for m in msgs]
    assert [s.matches_lookup(lookup(m)) for m in msgs] == per_message
    assert [reference(s.ast, lookup(m)) is True for m in msgs] == per_message  # type: ignore[arg-type]
    batch = messages_to_batch(msgs)
    for data in arrow_variants(batch):
        assert s.evaluate_batch(data).to_pylist() == per_message
    for data in large_variants(batch):
        assert s.evaluate_batch(data).to_pylist() == per_message * 20


@SETTINGS
@given(conditions)
@example(Compare("=", Identifier("a"), Literal(3.4025001647762064e38, "float")))  # shortest text near FLT_MAX
@example(Compare("=", Identifier("a"), Literal(3.4028234663852886e38, "float")))
@example(Compare("=", Identifier("a"), Literal(-(2**63), "long")))
@example(Compare("=", Identifier("a"), Unary("-", Literal(-(2**31), "int"))))
@example(Compare("=", Identifier("a"), Literal(5e-324, "double")))
@example(Compare("=", Identifier("a"), Literal(1.401298464324817e-45, "float")))
def test_canonical_text_round_trips(ast: Node) -> None:
    text = str(ast)
    assert Selector(text).ast == ast
    assert str(Selector(text).ast) == text


def _parse_or_invalid(text: str) -> None:
    try:
        s = Selector(text)
    except InvalidSelectorException as exc:
        assert "position" in str(exc) or "selector" in str(exc)
        return
    if s.ast is not None:
        assert Selector(str(s.ast)).ast == s.ast


@SETTINGS
@given(st.text())
def test_parser_fuzz_arbitrary_text(text: str) -> None:
    _parse_or_invalid(text)


TOKENS = ["a", "b", "JMSType", "JMSFoo", "(", ")", ",", "=", "<>", "<", "<=", ">", ">=", "+", "-", "*", "/",
          "NOT", "AND", "OR", "BETWEEN", "LIKE", "IN", "IS", "NULL", "ESCAPE", "TRUE", "FALSE", "'x'", "'%'",
          "''", "'", "1", "0x1F", "017", "09", "1L", "1.5", ".5", "1e3", "1e", "1F", "9223372036854775808",
          "2147483648", "1_0", "0b1", "!", "#", "\n", "é"]


@SETTINGS
@given(st.lists(st.sampled_from(TOKENS), max_size=12), st.sampled_from([" ", ""]))
def test_parser_fuzz_token_soup(tokens: list[str], sep: str) -> None:
    _parse_or_invalid(sep.join(tokens))


@SETTINGS
@given(conditions, st.integers(0, 10_000), st.sampled_from(["delete", "insert", "swap"]),
       st.sampled_from([*string.printable[:95], "é", "\x00"]))
def test_parser_fuzz_mutated_selectors(ast: Node, where: int, how: str, ch: str) -> None:
    text = str(ast)
    i = where % (len(text) + 1)
    if how == "delete":
        text = text[:i] + text[i + 1:]
    elif how == "insert":
        text = text[:i] + ch + text[i:]
    else:
        text = text[:i] + ch + text[i + 1:]
    _parse_or_invalid(text)


def test_reference_sanity() -> None:
    # the reference itself must see NaN, NULL and unlike types like the spec says
    assert reference(Compare("=", Identifier("a"), Identifier("a")), {"a": math.nan}.get) is False
    assert reference(Compare("=", Identifier("a"), Literal(1, "int")), {}.get) is None
    assert reference(Compare("=", Identifier("a"), Literal(1, "int")), {"a": "1"}.get) is False


NUMERIC_TYPES = ["byte", "short", "int", "long", "float", "double"]


def _near(value: float) -> list[Literal]:
    """Literals of every numeric kind at, and one step around, ``value``."""
    out = []
    if isinstance(value, float) and not math.isfinite(value):
        return [Literal(0, "int")]
    for v in (value, int(value) + 1, int(value) - 1, math.nextafter(float(value), math.inf)):
        if -(2**31) <= v < 2**31 and float(v).is_integer():
            out.append(Literal(int(v), "int"))
        if -(2**63) <= v < 2**63 and float(v).is_integer():
            out.append(Literal(int(v), "long"))
        f = float(v)
        if math.isfinite(f):
            out.append(Literal(f, "double"))
        f32 = float(Float(f)) if abs(f) < 3.4e38 else None
        if f32 is not None and math.isfinite(f32) and (f32 != 0.0 or f == 0.0):
            out.append(Literal(f32, "float"))
    return out


@SETTINGS
@given(st.sampled_from(["=", "<>", "<", "<=", ">", ">="]), st.sampled_from(NUMERIC_TYPES), st.data(),
       numeric_literals, st.booleans())
def test_numeric_promotion_agrees(op: str, kind: str, data: st.DataObject, lit: Literal, flip: bool) -> None:
    """Dense check of identifier-vs-literal comparisons, where the closures are specialised."""
    value = data.draw(VALUES[kind])
    other = data.draw(VALUES[data.draw(st.sampled_from(NUMERIC_TYPES))])
    if data.draw(st.booleans()):  # a literal near the value: where promotion rounding shows
        lit = data.draw(st.sampled_from(_near(value)))
    cmp: Any = op  # one of the six operators (sampled above)
    for ast in (Compare(cmp, Identifier("a"), lit) if not flip else Compare(cmp, lit, Identifier("a")),
                Between(Identifier("a"), lit, Identifier("b"), flip),
                Compare(cmp, Identifier("a"), Identifier("b"))):
        s = Selector(str(ast))
        msgs = [TextMessage("x"), TextMessage("x")]
        msgs[0]._props.update(a=value, b=other)
        msgs[1]._props.update(a=value)
        per_message = [s.matches(m) for m in msgs]
        assert [reference(s.ast, lookup(m)) is True for m in msgs] == per_message  # type: ignore[arg-type]
        assert s.evaluate_batch(messages_to_batch(msgs)).to_pylist() == per_message
        negated = Selector(f"NOT ({ast})")
        assert [reference(negated.ast, lookup(m)) is True for m in msgs] == [  # type: ignore[arg-type]
            negated.matches(m) for m in msgs
        ]
