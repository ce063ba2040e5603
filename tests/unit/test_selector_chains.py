"""OR/IN chains over one property become one set lookup (``selector/chains.py``), and the
answers stay exactly those of the general evaluator, three-valued NULL logic included."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_selector_hypothesis import conditions, lookup, reference

from amqp_jms.message import Message, TextMessage
from amqp_jms.message._data import view
from amqp_jms.selector import Selector
from amqp_jms.selector.codegen import compile_lookup, compile_message
from amqp_jms.selector.compiler import compile_condition, message_headers
from amqp_jms.testing.messages import with_properties
from amqp_jms.types import Byte, Char, Double, Float, Int, Long, Short, Symbol

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

NAMES = ["a", "a", "b", "JMSType", "JMSPriority"]
SMALL_STRINGS = st.sampled_from(["", "x", "y", "z", "x'y"])
SMALL_INTS = st.integers(-2, 9)
VALUES: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    SMALL_STRINGS,
    SMALL_STRINGS.filter(bool).map(Symbol),
    st.sampled_from(["x", "y"]).map(Char),
    SMALL_INTS,
    SMALL_INTS.map(Byte),
    SMALL_INTS.map(Short),
    SMALL_INTS.map(Int),
    SMALL_INTS.map(Long),
    SMALL_INTS.map(float),
    SMALL_INTS.map(Double),
    SMALL_INTS.map(Float),
    st.sampled_from([0.5, float("nan"), 2**53 + 1]),
    st.booleans(),
    st.just(b"x"),
)


def _quote(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


@st.composite
def member_term(draw: st.DrawFn) -> str:
    """A term a group can take (either chain), or one it must leave alone."""
    name = draw(st.sampled_from(NAMES))
    form = draw(st.sampled_from(["=", "<>", "in", "not in", "flip", "float"]))
    if form == "in" or form == "not in":
        items = draw(st.lists(SMALL_STRINGS, min_size=1, max_size=3))
        return f"{name} {form.upper()} ({', '.join(map(_quote, items))})"
    lit = _quote(draw(SMALL_STRINGS)) if draw(st.booleans()) else str(draw(SMALL_INTS))
    if form == "flip":
        return f"{lit} {draw(st.sampled_from(['=', '<>']))} {name}"
    if form == "float":
        return f"{name} = {draw(SMALL_INTS)}.0"
    return f"{name} {form} {lit}"


@st.composite
def chains(draw: st.DrawFn) -> str:
    word = draw(st.sampled_from([" OR ", " AND "]))
    terms = draw(st.lists(member_term(), min_size=1, max_size=8))
    extra = draw(st.lists(conditions.map(str), max_size=2))
    text = word.join(terms + [f"({e})" for e in extra])
    return f"NOT ({text})" if draw(st.booleans()) else text


def _with(**props: Any) -> Message:
    m = TextMessage("x")
    m = with_properties(m, props)
    return m


@st.composite
def messages(draw: st.DrawFn) -> list[Message]:
    out = []
    for _ in range(draw(st.integers(1, 5))):
        m = TextMessage("x")
        for name in ("a", "b"):
            v = draw(VALUES)
            if v is not None:
                m = with_properties(m, {name: v})
        m.set_jms_type(draw(st.one_of(st.none(), SMALL_STRINGS)))
        m.set_jms_priority(draw(st.integers(0, 9)))
        out.append(m)
    return out


@SETTINGS
@given(chains(), messages())
@example("a = 'x' OR a IN ('y') OR a = 1", [_with(a=1), _with(a="y"), _with(a=Float(1.0)), _with()])
@example("a <> 'x' AND a NOT IN ('y') AND a <> 'z'", [_with(a=1), _with(a="y"), _with(a="q"), _with()])
@example("a NOT IN ('x') AND a NOT IN ('y')", [_with(a=1), _with(a=True)])
@example(
    "a = 1 AND a <> 2 AND a <> 3 AND a <> 'x' AND a <> 'y'", [_with(a=1), _with(a="x"), _with(a=Byte(1))]
)
def test_grouped_chains_agree_with_the_general_evaluator(text: str, msgs: list[Message]) -> None:
    s = Selector(text)
    assert s.ast is not None
    is_true = compile_condition(s.ast, message_headers(), True)
    is_false = compile_condition(s.ast, message_headers(), False)
    for m in msgs:
        walked = reference(s.ast, lookup(m))
        assert is_true(view(m).properties, m) is (walked is True)
        assert is_false(view(m).properties, m) is (walked is False)
        assert s.matches(m) is (walked is True), (text, view(m).properties)
        assert s.matches_lookup(lookup(m)) is (walked is True), (text, view(m).properties)
        # is-false of the generated code too: NOT flips the chain's polarity
        negated = Selector(f"NOT ({text})")
        assert negated.matches_lookup(lookup(m)) is (walked is False), (text, view(m).properties)


def test_a_6000_term_or_chain_is_one_set_lookup() -> None:
    """The issue's selector: 6,000 terms over one property. The generated function reads the
    property once and asks one set; it no longer holds 6,000 comparisons."""
    text = " OR ".join(f"id = 'value-{i}'" for i in range(6000))
    s = Selector(text)
    assert s.ast is not None
    fn = compile_lookup(s.ast)
    assert fn.__doc__ is not None and fn.__doc__.count(" in ") == 1 and len(fn.__doc__) < 300
    assert fn({"id": "value-5999"}.get) is True
    assert fn({"id": "value-6000"}.get) is False
    assert fn({}.get) is False
    assert fn({"id": 5}.get) is False
    assert Selector(f"NOT ({text})").matches_lookup({"id": 5}.get) is True  # FALSE, not UNKNOWN


def test_an_integer_chain_is_one_lookup_and_promotes_like_java() -> None:
    text = " OR ".join(f"n = {i}" for i in range(1000))
    s = Selector(text)
    assert s.ast is not None
    fn = compile_message(s.ast)
    assert fn.__doc__ is not None and len(fn.__doc__) < 300
    m = TextMessage("x")
    for value, expected in [(Int(999), True), (999.0, True), (Float(7.0), True), (7.5, False), ("7", False)]:
        m = with_properties(m, {"n": value})
        assert fn(m) is expected, value


def test_term_count_counts_the_conditions_a_chain_combines() -> None:
    from amqp_jms.selector import term_count

    def count(text: str) -> int:
        ast = Selector(text).ast
        assert ast is not None
        return term_count(ast)

    assert count("a = 1") == 1
    assert count("a = 1 OR b IN ('x', 'y', 'z') OR NOT (c LIKE 'z%' AND d IS NULL)") == 4
    assert count("a + 1 > b * 2 AND e BETWEEN 1 AND 2") == 2
    assert count(" OR ".join(f"id = {i}" for i in range(6000))) == 6000


def test_compiled_lookup_generates_the_function_now_and_once() -> None:
    s = Selector("a = 'x' OR b > 2")
    fn = s.compiled_lookup()
    assert fn.__name__ == "_selector" and s.matches_lookup is fn and s.compiled_lookup() is fn
    assert fn({"a": "x"}.get) is True and fn({"b": 1}.get) is False
    assert Selector("").compiled_lookup()({}.get) is True  # no selector: everything matches


def test_a_generated_evaluator_is_freed_when_dropped_without_the_cyclic_collector() -> None:
    """The broker drops a consumer's selector when the consumer goes; its generated code (a
    MB or so for a thousand-term selector) must go then, not at some later cyclic collection."""
    import gc
    import weakref

    gc.disable()
    try:
        s = Selector(" OR ".join(f"p{i} = {i}.5" for i in range(50)))
        fn = s.compiled_lookup()
        gone = weakref.ref(fn)
        del s, fn
        assert gone() is None
    finally:
        gc.enable()
