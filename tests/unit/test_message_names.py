"""Property names are selector identifiers (JMS §3.5.1, §3.8.1.1), Unicode included."""

from __future__ import annotations

from typing import Any

import pytest

from amqp_jms import MapMessage, Message
from amqp_jms.message import is_valid_property_name

VALID = [
    "a",
    "_",
    "$",
    "_x1",
    "$price",
    "JMSXGroupID",
    "JMS_AMQP_ORIG",
    "camelCase9",
    "café",  # Latin letters beyond ASCII
    "日本語",  # Lo
    "Ωmega",  # Lu
    "a\u0301",  # combining acute accent (Mn) as a part character
    "x\u0663",  # Arabic-Indic digit three (Nd) after the first character
    "€uro",  # currency symbol (Sc) may start an identifier
    "\u203fjoin",  # undertie (Pc) may start an identifier
    "\u2160count",  # Roman numeral one (Nl) is a letter number: a start character
    "𝒳var",  # U+1D4B3, a letter outside the BMP
    "a\u00adb",  # soft hyphen (Cf) is identifier-ignorable: a part character
    "nullable",  # keywords only match whole names
    "In_stock",
    "ISx",
]

INVALID = [
    "1abc",  # digit first
    "\u0663x",  # Nd first
    "\u0301a",  # combining mark first
    "a-b",
    "a b",
    "a.b",
    "a+b",
    "x'y",
    "-a",
    " a",
    "a\u00a0",  # no-break space is not a part character
    "😀",  # So: not a letter
    "price€-",
    "\u00adb",  # an ignorable character cannot start
]

KEYWORDS = ["NULL", "null", "True", "FALSE", "not", "AND", "Or", "between", "LIKE", "in", "IS",
            "Escape"]


@pytest.mark.parametrize("name", VALID)
def test_valid_names_are_accepted(name: str) -> None:
    msg = Message()
    msg.set_int_property(name, 1)
    assert msg.get_int_property(name) == 1
    assert is_valid_property_name(name)


@pytest.mark.parametrize("name", INVALID + KEYWORDS)
def test_invalid_names_are_value_errors(name: str) -> None:
    msg = Message()
    with pytest.raises(ValueError, match="property name"):
        msg.set_string_property(name, "v")
    assert msg.get_property_names() == []
    assert not is_valid_property_name(name)


@pytest.mark.parametrize("name", [None, ""])
def test_null_and_empty_names_are_value_errors(name: Any) -> None:
    for setter, value in [("set_boolean_property", True), ("set_object_property", 1),
                          ("set_double_property", 1.0)]:
        with pytest.raises(ValueError):
            getattr(Message(), setter)(name, value)


def test_non_string_name_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        Message().set_int_property(5, 1)  # type: ignore[arg-type]


def test_keyword_error_says_why() -> None:
    with pytest.raises(ValueError, match="reserved selector word"):
        Message().set_int_property("between", 1)


def test_every_setter_validates() -> None:
    setters = {"boolean": True, "byte": 1, "short": 1, "int": 1, "long": 1, "float": 1.0,
               "double": 1.0, "string": "s", "object": "s"}
    for set_type, value in setters.items():
        with pytest.raises(ValueError):
            getattr(Message(), f"set_{set_type}_property")("not valid", value)


def test_map_item_names_need_not_be_identifiers() -> None:
    msg = MapMessage()
    msg.set_int("not an identifier - fine", 1)
    msg.set_string("NULL", "fine too")
    assert msg.get_map_names() == ["not an identifier - fine", "NULL"]
    for bad in (None, ""):
        with pytest.raises(ValueError):
            msg.set_int(bad, 1)  # type: ignore[arg-type]
