"""Two Jakarta Messaging TCK selector rules, on every evaluator that shares the one engine: the
client's per-message functions, the lookup form, Arrow batches and the embedded broker's filter
(Spark's column function: tests/spark/test_spark_selector_column.py).

- A boolean compared with a number (``TRUE = 0``) is an ``InvalidSelectorException`` when the
  selector is created.
- ``NOT IN`` on a property that is not a String is unknown, so the message does not match (and
  neither does ``IN``)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from amqp_jms.broker.routing.selectors import compile_selector
from amqp_jms.broker.storage.message import BrokerMessage
from amqp_jms.exceptions import InvalidSelectorException
from amqp_jms.mapping import encode
from amqp_jms.message import TextMessage
from amqp_jms.selector import Selector
from amqp_jms.selector.arrow import messages_to_batch
from amqp_jms.types import Byte, Float, Int, Short


@pytest.mark.parametrize("text", ["TRUE = 0", "FALSE <> 1", "0 = TRUE", "TRUE = 1.0", "(a > 1) = 0",
                                  "x = 1 OR FALSE = 0L"])
def test_boolean_compared_with_a_number_is_refused_at_creation(text: str) -> None:
    with pytest.raises(InvalidSelectorException, match="boolean with a number"):
        Selector(text)
    with pytest.raises(InvalidSelectorException, match="boolean with a number"):
        compile_selector(text)  # the broker refuses the subscription the same way


def _every_evaluator(text: str, props: dict[str, Any]) -> list[bool]:
    m = TextMessage("x")
    for k, v in props.items():
        m.set_object_property(k, v)
    sel = Selector(text)
    broker = compile_selector(text)
    assert broker is not None
    return [
        sel.matches(m),
        sel.matches_lookup(props.get),
        sel.evaluate_batch(messages_to_batch([m])).to_pylist()[0],
        broker(BrokerMessage.parse(encode(m), now=time.time())),
    ]


@pytest.mark.parametrize("value", [1, Int(1), Short(1), Byte(1), 1.0, Float(1.0), True, False])
@pytest.mark.parametrize("text", ["p NOT IN ('1', 'true', 'false')", "p IN ('1', 'true')",
                                  "NOT (p IN ('1'))", "NOT (p NOT IN ('1'))"])
def test_in_and_not_in_on_a_non_string_match_nothing(text: str, value: Any) -> None:
    assert _every_evaluator(text, {"p": value}) == [False] * 4


def test_in_and_not_in_on_strings_are_unchanged() -> None:
    assert _every_evaluator("p NOT IN ('a', 'b')", {"p": "c"}) == [True] * 4
    assert _every_evaluator("p NOT IN ('a', 'b')", {"p": "a"}) == [False] * 4
    assert _every_evaluator("p IN ('a', 'b')", {"p": "b"}) == [True] * 4
    assert _every_evaluator("p NOT IN ('a')", {}) == [False] * 4  # NULL: unknown, as before
    # unknown only for the IN term: the rest of an OR still decides
    assert _every_evaluator("p NOT IN ('1') OR q = 2", {"p": 1, "q": 2}) == [True] * 4
