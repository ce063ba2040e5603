"""Poison messages: a delivery the client cannot turn into a JMS message is settled
``modified{delivery-failed, undeliverable-here}`` and skipped, with one WARNING saying why, on
every face that receives (Qpid JMS: AmqpConsumer.processDelivery). Before, ``receive()`` raised
``MessageFormatException`` and left the delivery unsettled, so it came back to every consumer, and
a prefetch-0 listener stalled (no credit after the failure).

The broker here dead-letters at the first failed delivery (``max_delivery_attempts=1``): the
poison message reaching the DLQ is the proof that the client settled it as failed.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

import pytest
from proton import Message as PMessage
from proton import byte, symbol
from proton.utils import BlockingConnection

from amqp_jms import ConnectionFactory, Queue, Session
from amqp_jms.aio import AsyncConnectionFactory

POISONS = {
    "unknown-msg-type": lambda: _annotated(PMessage(body="poison"), 9),
    "user-id-not-utf8": lambda: _with_user_id(PMessage(body="poison"), b"\xff\xfe"),
    "text-not-utf8": lambda: _text_bytes(b"\xff\xfe poison"),
}


def _annotated(m: PMessage, code: int) -> PMessage:
    m.annotations = {symbol("x-opt-jms-msg-type"): byte(code)}
    return m


def _with_user_id(m: PMessage, uid: bytes) -> PMessage:
    m.user_id = uid
    return m


def _text_bytes(data: bytes) -> PMessage:
    m = PMessage(body=data, inferred=True)
    m.content_type = "text/plain; charset=utf-8"
    return m


def _send_raw(url: str, address: str, messages: list[PMessage]) -> None:
    c = BlockingConnection(url, timeout=10)
    try:
        s = c.create_sender(address)
        for m in messages:
            s.send(m)
    finally:
        c.close()


def _dlq(url: str, expect: int) -> list[Any]:
    c = BlockingConnection(url, timeout=10)
    try:
        r = c.create_receiver("DLQ", credit=10)
        out = []
        for _ in range(expect):
            m = r.receive(timeout=5)
            r.accept()
            out.append(m.body)
        return out
    finally:
        c.close()


@pytest.fixture
def dl_broker(broker_factory: Any) -> Any:
    return broker_factory(data_dir=None, max_delivery_attempts=1)


def _good(text: str) -> PMessage:
    return PMessage(body=text)


def _warnings(caplog: Any) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING
            and "cannot be read as a JMS message" in r.getMessage()]


@pytest.mark.parametrize("kind", sorted(POISONS))
def test_sync_receive_skips_and_settles_a_poison_message(dl_broker: Any, caplog: Any, kind: str) -> None:
    _send_raw(dl_broker.url, "p-sync", [POISONS[kind](), _good("after")])
    with caplog.at_level(logging.WARNING), ConnectionFactory(dl_broker.url).create_connection() as conn:
        conn.start()
        consumer = conn.create_session().create_consumer(Queue("p-sync"))
        m = consumer.receive(5000)
        assert m is not None and m.get_body(str) == "after"
        assert consumer.receive_no_wait() is None
    assert len(_dlq(dl_broker.url, 1)) == 1
    assert len(_warnings(caplog)) == 1


@pytest.mark.parametrize("prefetch", [0, 1000])
def test_listener_skips_a_poison_message_and_keeps_receiving(dl_broker: Any, prefetch: int) -> None:
    _send_raw(dl_broker.url, "p-listen",
              [POISONS["unknown-msg-type"](), _good("a"), POISONS["text-not-utf8"](), _good("b")])
    got: list[str] = []
    done = threading.Event()

    def on_message(m: Any) -> None:
        got.append(m.get_body(str))
        if len(got) == 2:
            done.set()

    url = f"{dl_broker.url}?jms.prefetchPolicy.all={prefetch}"
    with ConnectionFactory(url).create_connection() as conn:
        conn.create_session().create_consumer(Queue("p-listen")).set_message_listener(on_message)
        conn.start()
        assert done.wait(10), got
    assert got == ["a", "b"]
    assert len(_dlq(dl_broker.url, 2)) == 2


@pytest.mark.parametrize("prefetch", [0, 1000])
def test_pull_and_client_ack_skip_poison(dl_broker: Any, prefetch: int) -> None:
    _send_raw(dl_broker.url, "p-pull", [POISONS["unknown-msg-type"](), _good("x")])
    url = f"{dl_broker.url}?jms.prefetchPolicy.all={prefetch}"
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        consumer = conn.create_session(False, Session.CLIENT_ACKNOWLEDGE).create_consumer(Queue("p-pull"))
        m = consumer.receive(5000)
        assert m is not None and m.get_body(str) == "x"
        m.acknowledge()
    assert len(_dlq(dl_broker.url, 1)) == 1


def test_receive_encoded_skips_a_poison_message(dl_broker: Any) -> None:
    _send_raw(dl_broker.url, "p-enc", [POISONS["unknown-msg-type"](), _good("y")])
    with ConnectionFactory(dl_broker.url).create_connection() as conn:
        conn.start()
        consumer = conn.create_session().create_consumer(Queue("p-enc"))
        got = consumer.receive_encoded(5000)
        assert got is not None and got.message.get_body(str) == "y"
    assert len(_dlq(dl_broker.url, 1)) == 1


def test_receive_encoded_without_the_body_vets_the_headers_only(dl_broker: Any) -> None:
    """``decode_body=False`` (what the Spark source's driver uses): a message whose headers are
    not JMS (unknown type annotation, user-id not UTF-8) is still settled as poison; one whose
    body alone does not decode (text not in its charset) is handed over with its bytes, headers
    and properties, for whoever decodes the body to report."""
    bad_body = _text_bytes(b"\xff\xfe not utf-8")
    bad_body.properties = {"n": 7}
    _send_raw(
        dl_broker.url,
        "p-enc-headers",
        [POISONS["unknown-msg-type"](), POISONS["user-id-not-utf8"](), bad_body, _good("y")],
    )
    with ConnectionFactory(dl_broker.url).create_connection() as conn:
        conn.start()
        consumer = conn.create_session().create_consumer(Queue("p-enc-headers"))
        got = consumer.receive_encoded(5000, decode_body=False)
        assert got is not None and got.message.get_long_property("n") == 7
        assert b"\xff\xfe not utf-8" in got.data
        assert got.message.get_jms_delivery_mode() == 1 and got.message.get_jms_message_id() is None
        last = consumer.receive_encoded_no_wait(decode_body=False) or consumer.receive_encoded(
            5000, decode_body=False
        )
        assert last is not None and b"y" in last.data
    assert len(_dlq(dl_broker.url, 2)) == 2


def test_asyncio_receive_skips_a_poison_message(dl_broker: Any) -> None:
    _send_raw(dl_broker.url, "p-aio", [POISONS["unknown-msg-type"](), _good("z")])

    async def main() -> str:
        conn = await AsyncConnectionFactory(dl_broker.url).create_connection()
        async with conn:
            await conn.start()
            session = await conn.create_session()
            consumer = await session.create_consumer(Queue("p-aio"))
            m = await consumer.receive(5000)
            assert m is not None
            return str(m.get_body(str))

    assert asyncio.run(main()) == "z"
    assert len(_dlq(dl_broker.url, 1)) == 1


def test_jms_context_receive_skips_a_poison_message(dl_broker: Any) -> None:
    _send_raw(dl_broker.url, "p-ctx", [POISONS["user-id-not-utf8"](), _good("c")])
    with ConnectionFactory(dl_broker.url).create_context() as ctx:
        consumer = ctx.create_consumer(Queue("p-ctx"))
        assert consumer.receive_body(str, 5000) == "c"
    assert len(_dlq(dl_broker.url, 1)) == 1


def test_browser_skips_a_poison_message_and_leaves_it_queued(dl_broker: Any, caplog: Any) -> None:
    _send_raw(dl_broker.url, "p-browse", [POISONS["unknown-msg-type"](), _good("seen")])
    with caplog.at_level(logging.WARNING), ConnectionFactory(dl_broker.url).create_connection() as conn:
        conn.start()
        session = conn.create_session()
        browsed = [m.get_body(str) for m in session.create_browser(Queue("p-browse"))]
        assert browsed == ["seen"]
        consumer = session.create_consumer(Queue("p-browse"))
        m = consumer.receive(5000)  # browsing consumed nothing: the consumer skips the poison too
        assert m is not None and m.get_body(str) == "seen"
    assert len(_warnings(caplog)) == 2
