"""A property name is settable exactly when a selector reads it as an identifier: the message
layer and the selector lexer share one definition of Java identifiers and reserved words."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amqp_jms.exceptions import InvalidSelectorException
from amqp_jms.message import Message, is_valid_property_name
from amqp_jms.selector import Selector
from amqp_jms.testing.messages import with_properties


def _selectable(name: str) -> bool:
    """Whether ``<name> = 1`` parses with ``name`` as a plain identifier."""
    try:
        selector = Selector(f"{name} = 1")
    except InvalidSelectorException:
        return False
    message = Message()
    try:
        message.set_int_property(name, 1)
    except ValueError:
        return False
    return selector.matches(message)


@pytest.mark.parametrize("name", ["\u0131n", "i\u017f", "\u0131s", "\u0131S"])
def test_non_ascii_spellings_of_keywords_are_identifiers_on_both_sides(name: str) -> None:
    # upper() maps these to IN / IS; neither the lexer nor JMS treats them as the keyword
    assert is_valid_property_name(name)
    assert _selectable(name)


@pytest.mark.parametrize("name", ["in", "Is", "NULL", "escape", "between"])
def test_ascii_keywords_are_refused_on_both_sides(name: str) -> None:
    assert not is_valid_property_name(name)
    with pytest.raises(ValueError, match="reserved selector word"):
        Message().set_int_property(name, 1)
    with pytest.raises(InvalidSelectorException):
        Selector(f"{name} = 1")


names = st.text(st.characters(categories=["L", "N", "Sc", "Pc", "Mn", "Cf", "Cc"]), min_size=1, max_size=4)


@settings(max_examples=200, deadline=None)
@given(names)
def test_settable_exactly_when_selectable(name: str) -> None:
    assert is_valid_property_name(name) == _selectable(name)


def test_mq_usr_folder_refuses_the_same_keywords() -> None:
    from amqp_jms.message import TextMessage
    from amqp_jms.mq import MQFormatError, from_mq_bytes, to_mq

    settable = TextMessage("x")
    settable.set_int_property("\u0131n", 1)
    assert from_mq_bytes(to_mq(settable).to_bytes()).get_int_property("\u0131n") == 1
    refused = TextMessage("x")
    refused = with_properties(refused, {"Like": 1})  # bypassing the setter, which refuses it too
    with pytest.raises(MQFormatError, match="selector keyword"):
        to_mq(refused)


@pytest.mark.parametrize("name", ["JMS", "JMSFoo", "JMSType", "JMSDestination"])
def test_reserved_jms_names_are_refused_on_both_sides(name: str) -> None:
    # §3.8.1.1: a JMS name that is not JMSX*/JMS_* is a header field, never a property
    assert not is_valid_property_name(name)
    with pytest.raises(ValueError, match="reserved"):
        Message().set_int_property(name, 1)
    assert not _selectable(name)


@pytest.mark.parametrize("name", ["JMSXGroupID", "JMS_AMQP_ACK_TYPE", "JMSX", "JMS_"])
def test_jmsx_and_provider_names_are_properties(name: str) -> None:
    assert is_valid_property_name(name)
    assert _selectable(name)
