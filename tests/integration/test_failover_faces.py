"""A failover connection through every face the application uses (issue 17): the connection
listener (interrupted / restored, sync and asyncio), the asyncio API, the ``amqp-jms`` CLI,
and temporary destinations re-created after a reconnect.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from amqp_jms import ConnectionFactory, Queue
from amqp_jms.aio import AsyncConnectionFactory
from amqp_jms.cli.main import main
from amqp_jms.testing import FaultProxy

FAST = "failover.initialReconnectDelay=0&failover.reconnectDelay=50&failover.maxReconnectDelay=200"


@pytest.fixture
def proxy(broker: Any) -> Iterator[FaultProxy]:
    with FaultProxy(broker.port) as p:
        yield p


def failover_url(proxy: FaultProxy, options: str = "") -> str:
    return f"failover:({proxy.url})?{FAST}{options}"


class Events(list[tuple[str, Any]]):
    """A connection listener recording ``(event, argument)``: ``on_connection_<event>(arg)``."""

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("on_connection_"):
            raise AttributeError(name)
        return lambda arg: self.append((name[len("on_connection_"):], arg))


def test_connection_listener_hears_interrupted_then_restored(proxy: FaultProxy) -> None:
    """JmsConnectionListener: a drop is reported as interrupted, the reconnect as restored, with
    the server's URI; no failure (failover did not give up)."""
    events = Events()
    with ConnectionFactory(failover_url(proxy)).create_connection() as conn:
        conn.add_connection_listener(events)
        conn.start()
        s = conn.create_session()
        p = s.create_producer(Queue("fo-listener"))
        proxy.drop()
        p.send(s.create_text_message("after"))
        want = ["established", "interrupted", "restored"]
        deadline = time.monotonic() + 10
        while [e for e, _ in events] != want and time.monotonic() < deadline:
            time.sleep(0.02)
        assert [e for e, _ in events] == want
        assert {uri for _, uri in events} == {proxy.url}


def test_asyncio_face_rides_through_a_drop(proxy: FaultProxy) -> None:
    async def go() -> list[str]:
        factory = AsyncConnectionFactory(failover_url(proxy))
        conn = await factory.create_connection()
        try:
            conn.add_connection_listener(events)  # its methods run on this loop
            await conn.start()
            s = await conn.create_session()
            p = await s.create_producer(Queue("fo-aio"))
            c = await s.create_consumer(Queue("fo-aio"))
            await p.send(s.create_text_message("one"))
            got = [(await c.receive(2000)).get_text()]
            await asyncio.to_thread(proxy.drop)
            await p.send(s.create_text_message("two"))  # waits for the reconnect, then completes
            while "two" not in got:
                m = await c.receive(5000)
                assert m is not None, got
                got.append(m.get_text())
            for _ in range(200):
                if [e for e, _ in events][-2:] == ["interrupted", "restored"]:
                    break
                await asyncio.sleep(0.02)
            return got
        finally:
            await conn.close()

    events = Events()
    got = asyncio.run(asyncio.wait_for(go(), 30))
    assert got[0] == "one" and got[-1] == "two"
    assert [e for e, _ in events][-2:] == ["interrupted", "restored"]


def test_asyncio_connection_listener_hears_failure_once_when_failover_gives_up(proxy: FaultProxy) -> None:
    """The asyncio face's connection listener hears on_connection_failure once, on its loop,
    when failover gives up; closing the dead connection adds nothing."""

    async def go() -> None:
        factory = AsyncConnectionFactory(failover_url(proxy, "&failover.maxReconnectAttempts=2"))
        conn = await factory.create_connection()
        try:
            conn.add_connection_listener(events)  # its methods run on this loop
            await conn.start()
            await asyncio.to_thread(proxy.refuse)
            await asyncio.to_thread(proxy.drop)
            for _ in range(250):
                if "failure" in [e for e, _ in events]:
                    break
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.3)  # a second report would come now
        finally:
            await conn.close()
        await asyncio.sleep(0.1)

    events = Events()
    asyncio.run(asyncio.wait_for(go(), 30))
    names = [e for e, _ in events]
    assert names.count("failure") == 1 and names[-2:] == ["interrupted", "failure"], names
    assert "gave up after 2 attempt" in str(events[-1][1])


def test_cli_receive_with_a_failover_url_rides_through_a_drop(
    proxy: FaultProxy, capsys: pytest.CaptureFixture[str]
) -> None:
    """``amqp-jms receive --url failover:(…)`` keeps receiving across a dropped connection."""
    url = failover_url(proxy)
    with ConnectionFactory(proxy.url).create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(Queue("fo-cli"))
        for i in range(3):
            p.send(s.create_text_message(f"m{i}"))

    def later() -> None:
        time.sleep(1.0)
        proxy.drop()
        time.sleep(0.3)
        with ConnectionFactory(proxy.url).create_connection() as c2:
            s2 = c2.create_session()
            pr = s2.create_producer(Queue("fo-cli"))
            for i in range(3, 6):
                pr.send(s2.create_text_message(f"m{i}"))

    t = threading.Thread(target=later)
    t.start()
    rc = main(["receive", "queue://fo-cli", "--url", url, "--timeout", "4", "--json"])
    t.join()
    assert rc == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.strip().startswith("{")]
    bodies = {line.get("body") for line in lines if "body" in line}
    assert {f"m{i}" for i in range(6)} <= bodies
    rc = main(["send", "queue://fo-cli2", "--url", url, "hello"])
    assert rc == 0


def test_temporary_queue_is_recreated_and_its_consumer_follows(proxy: FaultProxy) -> None:
    """testTempDestinationRecreatedAfterConnectionFailsOver: after the reconnect the temporary
    queue exists again (a new name) and the consumer and producer on it still work."""
    with ConnectionFactory(failover_url(proxy)).create_connection() as conn:
        conn.start()
        s = conn.create_session()
        tq = s.create_temporary_queue()
        c = s.create_consumer(tq)
        p = s.create_producer(tq)
        p.send(s.create_text_message("before"))
        assert c.receive(2000).get_text() == "before"
        proxy.drop()
        p.send(s.create_text_message("after"))
        m = c.receive(5000)
        if m is not None and m.get_text() == "before":  # pragma: no cover - its ack was lost
            m = c.receive(5000)
        assert m is not None and m.get_text() == "after"
        # request/reply: the request names the TemporaryQueue the application holds; the reply
        # sent to what the request carried reaches the consumer on the re-created queue
        request = s.create_text_message("ping")
        request.set_jms_reply_to(tq)
        s.create_producer(Queue("fo-requests")).send(request)
        got = s.create_consumer(Queue("fo-requests")).receive(2000)
        assert got is not None
        anonymous = s.create_producer(None)
        anonymous.send(got.get_jms_reply_to(), s.create_text_message("pong"))
        anonymous.send(tq, s.create_text_message("pong to the old value"))
        assert [c.receive(2000).get_text() for _ in range(2)] == ["pong", "pong to the old value"]
        c.close()
        tq.delete()


def test_temporary_topic_is_recreated_and_its_subscribers_follow(proxy: FaultProxy) -> None:
    """A TemporaryTopic across a failover: re-created under a new name that the application's
    object follows (a message naming it carries the new one); its subscribers re-attach and
    each hears what is published after the reconnect, including a publish to the address a
    message carried as JMSReplyTo."""
    with ConnectionFactory(failover_url(proxy)).create_connection() as conn:
        conn.start()
        s = conn.create_session()
        tt = s.create_temporary_topic()
        before = tt.get_topic_name()
        subs = [s.create_consumer(tt), s.create_consumer(tt)]
        p = s.create_producer(tt)
        p.send(s.create_text_message("before"))
        assert [c.receive(2000).get_text() for c in subs] == ["before", "before"]
        proxy.drop()
        p.send(s.create_text_message("after"))  # waits for the reconnect
        assert [c.receive(5000).get_text() for c in subs] == ["after", "after"]
        request = s.create_text_message("ping")
        request.set_jms_reply_to(tt)
        s.create_producer(Queue("fo-tt-requests")).send(request)
        got = s.create_consumer(Queue("fo-tt-requests")).receive(2000)
        assert got is not None
        assert got.get_jms_reply_to().get_topic_name() != before  # re-created under a new name
        s.create_producer(None).send(got.get_jms_reply_to(), s.create_text_message("pong"))
        assert [c.receive(2000).get_text() for c in subs] == ["pong", "pong"]
        for c in subs:
            c.close()
        tt.delete()
