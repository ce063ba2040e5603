"""Any call on a message's public API with any argument raises only what the package documents:
a JMSException, or TypeError / ValueError where Java throws NullPointerException /
IllegalArgumentException (amqp_jms.message docstring). Never IndexError, KeyError,
struct.error, UnicodeError, OverflowError or RecursionError from inside."""

from __future__ import annotations

import inspect
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mapping_proton_oracle import amqp_values

from amqp_jms.destination import Queue
from amqp_jms.exceptions import JMSException
from amqp_jms.message import BytesMessage, MapMessage, Message, ObjectMessage, StreamMessage, TextMessage
from amqp_jms.message._seam import mark_received

CLASSES: list[type[Message]] = [Message, TextMessage, BytesMessage, MapMessage, StreamMessage, ObjectMessage]
ALLOWED = (JMSException, TypeError, ValueError)

weird = st.one_of(
    amqp_values,
    st.text(st.characters(codec=None), max_size=6),
    st.binary(max_size=12),
    st.integers(),
    st.floats(),
    st.none(),
    st.just(Queue("q")),
    st.just(2**70),
    st.lists(st.integers(), max_size=3),
    st.builds(bytearray, st.binary(max_size=4)),
)
names = st.one_of(
    st.sampled_from(["a", "b", "JMSXGroupID", "JMSXDeliveryCount", "JMS_AMQP_ACK_TYPE", "", "NULL"]), weird
)


def _public_methods(cls: type[Message]) -> list[tuple[str, int, int]]:
    """(name, required positional args, optional positional args) of each public method."""
    out = []
    for name in dir(cls):
        if name.startswith("_") or name == "acknowledge" or not callable(getattr(cls, name)):
            continue
        params = [
            p
            for p in inspect.signature(getattr(cls, name)).parameters.values()
            if p.name != "self" and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        required = sum(p.default is p.empty for p in params)
        out.append((name, required, len(params) - required))
    return out


METHODS = {cls: _public_methods(cls) for cls in CLASSES}


@st.composite
def call_sequences(draw: st.DrawFn) -> tuple[type[Message], list[tuple[str, list[Any]]]]:
    cls = draw(st.sampled_from(CLASSES))
    calls = []
    for _ in range(draw(st.integers(1, 8))):
        name, required, optional = draw(st.sampled_from(METHODS[cls]))
        count = required + draw(st.integers(0, optional))
        named_first = "property" in name or (cls is MapMessage and name.startswith(("set_", "get_", "item")))
        args = [draw(names) if i == 0 and named_first else draw(weird) for i in range(count)]
        calls.append((name, args))
    return cls, calls


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(call_sequences(), st.booleans())
def test_any_call_raises_only_documented_exceptions(
    sequence: tuple[type[Message], list[tuple[str, list[Any]]]], received: bool
) -> None:
    cls, calls = sequence
    message = cls()
    if received:
        mark_received(message)
    for name, args in calls:
        try:
            getattr(message, name)(*args)
        except UnicodeError:  # a ValueError subclass, but an internal encoding failure, not IAE
            raise
        except ALLOWED:
            pass
