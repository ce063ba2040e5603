"""The broker filters on its own view of a message's selector identifiers
(``broker.message_bytes.selector_view``); every client-side evaluator reads the message the mapping
decodes. The two must agree (``test_selector_differential`` pins them on generated selectors);
this file pins the cases where they once disagreed (a missing timestamp, the id forms)."""

from __future__ import annotations

import pytest

from amqp_jms.broker.routing.selectors import compile_selector
from amqp_jms.broker.storage.message import BrokerMessage
from amqp_jms.mapping import decode, encode
from amqp_jms.message import TextMessage
from amqp_jms.selector import Selector


def test_the_broker_reads_a_missing_timestamp_as_the_mapping_does() -> None:
    m = TextMessage("x")  # never sent, or sent with disableMessageTimestamp: nothing on the wire
    record = BrokerMessage.parse(encode(m), now=0.0)
    assert decode(encode(m)).get_jms_timestamp() == 0
    for text in ("JMSTimestamp IS NULL", "JMSTimestamp = 0"):
        broker_filter = compile_selector(text)
        assert broker_filter is not None
        assert broker_filter(record) == Selector(text).matches(m), text


@pytest.mark.parametrize("message_id", ["ID:AMQP_ULONG:5", "ID:AMQP_NO_PREFIX:abc"])
def test_the_broker_reads_a_message_id_as_the_mapping_does(message_id: str) -> None:
    m = TextMessage("x")
    m.set_jms_message_id(message_id)
    data = encode(m)
    seen = decode(data).get_jms_message_id()
    broker_filter = compile_selector(f"JMSMessageID = '{seen}'")
    assert broker_filter is not None
    assert broker_filter(BrokerMessage.parse(data, now=0.0))


def test_the_broker_reads_prefixed_ids_as_the_mapping_does() -> None:
    for message_id in ["ID:abc", "ID:AMQP_UUID:0f8fad5b-d9cb-469f-a165-70867728950e", "ID:AMQP_BINARY:0A0B"]:
        m = TextMessage("x")
        m.set_jms_message_id(message_id)
        data = encode(m)
        seen = decode(data).get_jms_message_id()
        broker_filter = compile_selector(f"JMSMessageID = '{seen}'")
        assert broker_filter is not None and broker_filter(BrokerMessage.parse(data, now=0.0)), message_id
