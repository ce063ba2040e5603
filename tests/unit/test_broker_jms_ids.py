"""A selector on ``JMSMessageID``/``JMSCorrelationID`` gives the same answer on the client and on
the embedded broker for every id form a peer may send: the broker reads ids with the client's
rule (``mapping/ids.py``), not a copy of its own. Before, a non-JMS sender's plain string id read
``ID:AMQP_NO_PREFIX:...`` on the client and the bare string on the broker."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from amqp_jms.broker.routing.selectors import compile_selector
from amqp_jms.broker.storage.message import BrokerMessage
from amqp_jms.mapping import decode
from amqp_jms.mapping.codec import Properties, encode_sections
from amqp_jms.selector import Selector
from amqp_jms.selector.parser import parse
from amqp_jms.types import Symbol, ULong

U = uuid.UUID("12345678-1234-5678-1234-567812345678")
IDS: list[tuple[Any, str]] = [  # (AMQP id on the wire, the JMSMessageID a JMS user sees)
    ("ID:abc-1", "ID:abc-1"),
    ("plain-42", "ID:AMQP_NO_PREFIX:plain-42"),
    ("ID:AMQP_ULONG:7", "ID:AMQP_STRING:ID:AMQP_ULONG:7"),
    (ULong(7), "ID:AMQP_ULONG:7"),
    (U, f"ID:AMQP_UUID:{U}"),
    (b"\x01\xab", "ID:AMQP_BINARY:01AB"),
]


def _both(data: bytes, text: str) -> tuple[bool, bool]:
    client = Selector(text).matches(decode(data))
    broker = compile_selector(text)
    assert broker is not None
    return client, broker(BrokerMessage.parse(data, now=time.time()))


def _selectors(field: str, jms_id: str, raw: Any) -> list[str]:
    quoted = jms_id.replace("'", "''")
    out = [f"{field} = '{quoted}'", f"{field} <> '{quoted}'", f"{field} LIKE 'ID:%'",
           f"{field} IS NULL", f"{field} IN ('{quoted}', 'x')"]
    if isinstance(raw, str):
        out.append(f"{field} = '{raw}'")  # the bare wire string: false on both sides unless equal
    return out


@pytest.mark.parametrize(("raw", "jms_id"), IDS)
def test_message_id_selectors_agree_on_client_and_broker(raw: Any, jms_id: str) -> None:
    data = encode_sections(properties=Properties(message_id=raw), body_type=0x77, body="x")
    assert decode(data).get_jms_message_id() == jms_id
    for text in _selectors("JMSMessageID", jms_id, raw):
        parse(text)
        client, broker = _both(data, text)
        assert client == broker, text
    assert _both(data, f"JMSMessageID = '{jms_id}'") == (True, True)


@pytest.mark.parametrize(("raw", "jms_id"), [*IDS, ("order-7", "order-7")])
def test_correlation_id_selectors_agree_on_client_and_broker(raw: Any, jms_id: str) -> None:
    app_specific = raw == "order-7"
    ma = {Symbol("x-opt-app-correlation-id"): True} if app_specific else None
    data = encode_sections(message_annotations=ma, properties=Properties(correlation_id=raw),
                           body_type=0x77, body="x")
    expected = jms_id if not isinstance(raw, bytes) else "ID:AMQP_BINARY:01AB"
    if isinstance(raw, str) and not raw.startswith("ID:") and not app_specific:
        expected = raw  # a correlation id without ID: is application-specific as it is
    assert decode(data).get_jms_correlation_id() == expected
    for text in _selectors("JMSCorrelationID", expected, raw):
        client, broker = _both(data, text)
        assert client == broker, text
    assert _both(data, f"JMSCorrelationID = '{expected}'") == (True, True)
