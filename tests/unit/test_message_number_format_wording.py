"""NumberFormatException messages name the target type with the right article ("an int")."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from amqp_jms.exceptions import NumberFormatException
from amqp_jms.message import Message


@pytest.mark.parametrize(
    ("read", "expected"),
    [
        (Message.get_byte_property, "(not a byte)"),
        (Message.get_short_property, "(not a short)"),
        (Message.get_int_property, "(not an int)"),
        (Message.get_long_property, "(not a long)"),
        (Message.get_float_property, "(not a float)"),
        (Message.get_double_property, "(not a double)"),
    ],
)
def test_unparsable_string_property_names_the_type_with_its_article(
    read: Callable[[Message, str], object], expected: str
) -> None:
    m = Message()
    m.set_string_property("p", "twelve")
    with pytest.raises(NumberFormatException) as info:
        read(m, "p")
    text = str(info.value)
    assert expected in text and "'twelve'" in text
    assert "a int" not in text
