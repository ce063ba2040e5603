"""Every example in JMS 2.0 section 3.8 (message selectors), as a test on real messages."""

from __future__ import annotations

from typing import Any

import pytest

from amqp_jms.exceptions import InvalidSelectorException
from amqp_jms.message import Message, TextMessage
from amqp_jms.message._data import view
from amqp_jms.selector import Selector
from amqp_jms.selector.arrow import messages_to_batch
from amqp_jms.testing.messages import with_properties


def msg(**props: Any) -> Message:
    m = TextMessage("x")
    m = with_properties(m, props)
    return m


def agree(selector: str, messages: list[Message]) -> list[bool]:
    """Per-message results, asserted equal to the vectorized ones."""
    s = Selector(selector)
    per_message = [s.matches(m) for m in messages]
    if all(set(view(m).properties) == set(view(messages[0]).properties) for m in messages):
        assert s.evaluate_batch(messages_to_batch(messages)).to_pylist() == per_message
    return per_message


def test_car_example() -> None:
    # 3.8.1.1: "JMSType = 'car' AND color = 'blue' AND weight > 2500"
    sel = Selector("JMSType = 'car' AND color = 'blue' AND weight > 2500")
    car = Message()
    car.set_jms_type("car")
    car.set_string_property("color", "blue")
    car.set_int_property("weight", 2600)
    assert sel.matches(car)
    car.set_jms_type("truck")
    assert not sel.matches(car)


def test_string_property_is_never_a_number() -> None:
    # setStringProperty("NumberOfOrders", "2"); "NumberOfOrders > 1" is false
    m = Message()
    m.set_string_property("NumberOfOrders", "2")
    assert not Selector("NumberOfOrders > 1").matches(m)
    assert Selector("NOT (NumberOfOrders > 1)").matches(m)  # the comparison is FALSE, not unknown
    m2 = Message()
    m2.set_int_property("NumberOfOrders", 2)
    assert Selector("NumberOfOrders > 1").matches(m2)


@pytest.mark.parametrize(
    ("literal", "value"),
    [
        ("'literal'", "literal"),
        ("'literal''s'", "literal's"),
        ("57", 57),
        ("-957", -957),
        ("+62", 62),
        ("7E3", 7000.0),
        ("-57.9E2", -5790.0),
        ("7.", 7.0),
        ("-95.7", -95.7),
        ("+6.2", 6.2),
        ("TRUE", True),
        ("FALSE", False),
    ],
)
def test_literal_examples(literal: str, value: object) -> None:
    assert agree(f"p = {literal}", [msg(p=value)]) == [True]


def test_empty_string_is_no_selector() -> None:
    assert Selector("").ast is None
    assert Selector("").matches(msg())


def test_keywords_are_case_insensitive_identifiers_are_not() -> None:
    assert agree("a Between 1 aNd 2 and B is not null OR c like 'x' oR d In ('y')", [msg(a=1, B=0)]) == [True]
    assert agree("A = 1", [msg(a=1)]) == [False]


@pytest.mark.parametrize("name", ["NULL", "TRUE", "FALSE", "NOT", "AND", "OR", "BETWEEN", "LIKE", "IN", "IS",
                                  "ESCAPE", "null", "Escape"])
def test_reserved_words_are_not_identifiers(name: str) -> None:
    with pytest.raises(InvalidSelectorException):
        Selector(f"{name} IS NULL")


def test_identifier_start_and_part_characters() -> None:
    assert agree("_x = 1 AND $y = 2 AND z9 = 3", [msg(_x=1, **{"$y": 2}, z9=3)]) == [True]
    with pytest.raises(InvalidSelectorException):
        Selector("9z = 3")


def test_between_examples_and_equivalences() -> None:
    ages = [msg(age=a) for a in (14, 15, 17, 19, 20)]
    assert agree("age BETWEEN 15 AND 19", ages) == [False, True, True, True, False]
    assert agree("age BETWEEN 15 AND 19", ages) == agree("age >= 15 AND age <= 19", ages)
    assert agree("age NOT BETWEEN 15 AND 19", ages) == [True, False, False, False, True]
    assert agree("age NOT BETWEEN 15 AND 19", ages) == agree("age < 15 OR age > 19", ages)
    assert agree("age BETWEEN 15 AND 19", [msg()]) == agree("age NOT BETWEEN 15 AND 19", [msg()]) == [False]


def test_in_examples_and_equivalences() -> None:
    countries = [msg(Country=c) for c in ("UK", "US", "France", "Peru")]
    in_list = "Country IN ('UK', 'US', 'France')"
    assert agree(in_list, countries) == [True, True, True, False]
    assert agree(in_list, countries) == agree("(Country = 'UK') OR (Country = 'US') OR (Country = 'France')",
                                              countries)
    not_in = "Country NOT IN ('UK', 'US', 'France')"
    assert agree(not_in, countries) == [False, False, False, True]
    assert agree(not_in, countries) == agree(
        "NOT ((Country = 'UK') OR (Country = 'US') OR (Country = 'France'))", countries
    )
    # "If identifier of an IN or NOT IN operation is NULL, the value of the operation is unknown."
    assert agree(in_list, [msg()]) == agree(not_in, [msg()]) == [False]


def test_like_examples() -> None:
    phones = [msg(phone=p) for p in ("123", "12993", "1234")]
    assert agree("phone LIKE '12%3'", phones) == [True, True, False]
    assert agree("phone NOT LIKE '12%3'", phones) == [False, False, True]
    words = [msg(word=w) for w in ("lose", "loose")]
    assert agree("word LIKE 'l_se'", words) == [True, False]
    under = [msg(underscored=u) for u in ("_foo", "bar")]
    assert agree("underscored LIKE '\\_%' ESCAPE '\\'", under) == [True, False]
    # "If identifier of a LIKE or NOT LIKE operation is NULL, the value of the operation is unknown."
    assert agree("phone LIKE '12%3'", [msg()]) == agree("phone NOT LIKE '12%3'", [msg()]) == [False]


def test_is_null_examples() -> None:
    assert agree("prop_name IS NULL", [msg(), msg(prop_name=1)]) == [True, False]
    assert agree("prop_name IS NOT NULL", [msg(), msg(prop_name=1)]) == [False, True]


def test_headers_that_may_be_null() -> None:
    m = Message()
    assert Selector("JMSMessageID IS NULL AND JMSCorrelationID IS NULL AND JMSType IS NULL").matches(m)
    m.set_jms_type("t")
    assert Selector("JMSType IS NOT NULL").matches(m)


def test_delivery_mode_compares_as_strings() -> None:
    # 3.8.1.3: JMSDeliveryMode is treated as having the values 'PERSISTENT' and 'NON_PERSISTENT'
    m = Message()
    m.set_jms_delivery_mode(2)
    assert Selector("JMSDeliveryMode = 'PERSISTENT'").matches(m)
    m.set_jms_delivery_mode(1)
    assert Selector("JMSDeliveryMode = 'NON_PERSISTENT'").matches(m)
    assert not Selector("JMSDeliveryMode = 1").matches(m)


def test_dates_are_long_millisecond_literals() -> None:
    m = Message()
    m.set_jms_timestamp(1_700_000_000_000)
    assert Selector("JMSTimestamp > 1699999999999 AND JMSTimestamp < 1700000000001L").matches(m)


def test_comparison_with_null_is_unknown_and_is_null_converts() -> None:
    # 3.8.1.2: comparison or arithmetic with an unknown value always yields an unknown value
    for sel in ("x = 1", "x + 1 = 2", "x <> 1", "NOT (x = 1)"):
        assert agree(sel, [msg()]) == [False]
    assert agree("x IS NULL", [msg()]) == [True]


def test_exact_and_approximate_compare_by_numeric_promotion() -> None:
    # B.2.2: comparison of exact and inexact numeric values is supported
    assert agree("i = 3.0 AND d = 3", [msg(i=3, d=3.0)]) == [True]


def test_string_and_boolean_comparison_restricted_to_equality() -> None:
    with pytest.raises(InvalidSelectorException):
        Selector("s > 'a'")
    with pytest.raises(InvalidSelectorException):
        Selector("b < TRUE")
    assert agree("s > t", [msg(s="b", t="a")]) == [False]


def test_sql_comments_are_not_supported() -> None:
    with pytest.raises(InvalidSelectorException):
        Selector("a = 1 /* comment */")


def test_message_body_cannot_be_referenced() -> None:
    # "Message selectors cannot reference message body values": a body is never a property
    assert not Selector("text = 'x'").matches(TextMessage("x"))
