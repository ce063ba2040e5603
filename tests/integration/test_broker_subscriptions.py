"""Topic subscriptions on the embedded broker: selectors, no-local, durable and shared ones."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from proton import Message
from proton.reactor import Container
from proton.utils import BlockingConnection, LinkDetached
from test_broker_peer import Caps, Durable, NullSource, Selector

from amqp_jms.broker import Broker


def connect(broker: Broker, container_id: str | None = None) -> BlockingConnection:
    container = Container()
    if container_id:
        container.container_id = container_id
    return BlockingConnection(broker.url, timeout=10, container=container)


@pytest.fixture
def conn(broker: Broker) -> Iterator[BlockingConnection]:
    c = connect(broker, "client-1")
    try:
        yield c
    finally:
        c.close()


def bodies(receiver: Any, timeout: float = 0.5) -> list[Any]:
    out: list[Any] = []
    while True:
        try:
            m = receiver.receive(timeout=timeout)
        except Exception:
            return out
        out.append(m.body)
        receiver.accept()


def test_selector_on_queue_consumer_leaves_other_messages(conn: BlockingConnection) -> None:
    s = conn.create_sender("sel-q")
    for i in range(6):
        s.send(Message(body=i, properties={"color": "red" if i % 2 else "blue", "n": i}))
    r = conn.create_receiver("sel-q", name="reds", options=Selector("color = 'red' AND n > 1"))
    assert bodies(r) == [3, 5]
    r.close()
    rest = conn.create_receiver("sel-q", name="rest")
    assert bodies(rest) == [0, 1, 2, 4]


def test_selector_on_topic_and_header_fields(conn: BlockingConnection) -> None:
    r = conn.create_receiver("sel-t", name="hi", options=[Caps("topic"), Selector("JMSPriority >= 7")])
    s = conn.create_sender("sel-t", options=Caps("topic"))
    s.send(Message(body="low", priority=2))
    s.send(Message(body="high", priority=8))
    assert bodies(r) == ["high"]


def test_invalid_selector_is_refused_with_invalid_field(conn: BlockingConnection) -> None:
    with pytest.raises(LinkDetached) as err:
        conn.create_receiver("sel-bad", options=Selector("color = = 'x'"))
    assert "amqp:invalid-field" in str(err.value)


def test_attach_echoes_filters(conn: BlockingConnection) -> None:
    r = conn.create_receiver("sel-echo", options=Selector("a = 1"))
    remote = r.link.remote_source.filter
    remote.rewind()
    remote.next()
    assert "jms-selector" in {str(k) for k in remote.get_object()}


def test_no_local_skips_own_connection(broker: Broker, conn: BlockingConnection) -> None:
    r = conn.create_receiver("nl", name="nl", options=[Caps("topic"), Selector("", no_local=True)])
    conn.create_sender("nl", options=Caps("topic")).send(Message(body="mine"))
    other = connect(broker, "other")
    try:
        other.create_sender("nl", options=Caps("topic")).send(Message(body="theirs"))
        assert bodies(r) == ["theirs"]
    finally:
        other.close()


def test_durable_subscription_survives_detach_and_resumes(broker: Broker) -> None:
    c = connect(broker, "durable-client")
    r = c.create_receiver("dtopic", name="mysub", options=[Caps("topic"), Durable()])
    pub = c.create_sender("dtopic", options=Caps("topic"))
    pub.send(Message(body=1))
    assert bodies(r) == [1]
    r.detach()
    pub.send(Message(body=2))
    pub.send(Message(body=3))
    r = c.create_receiver("dtopic", name="mysub", options=[Caps("topic"), Durable()])
    assert bodies(r) == [2, 3]
    r.detach()
    c.close()
    # same client id later: still there; another container id: a different subscription
    c = connect(broker, "durable-client")
    c.create_sender("dtopic", options=Caps("topic")).send(Message(body=4))
    r = c.create_receiver("dtopic", name="mysub", options=[Caps("topic"), Durable()])
    assert bodies(r) == [4]
    c.close()


def test_null_source_lookup_returns_stored_source_and_close_unsubscribes(broker: Broker) -> None:
    c = connect(broker, "lookup-client")
    r = c.create_receiver("ltopic", name="lsub", options=[Caps("topic"), Durable(), Selector("x = 1")])
    r.detach()
    c.close()  # (proton keeps a detached link's name busy on its connection)
    c = connect(broker, "lookup-client")
    look = c.create_receiver(None, name="lsub", options=NullSource())
    src = look.link.remote_source
    assert src.address == "ltopic"
    look.close()  # detach with closed=true: unsubscribe
    assert broker.run_soon(lambda: len(broker.core.router.subscriptions)) == 0  # type: ignore[union-attr]
    # a lookup of an unknown subscription answers with a null source and Detach amqp:not-found
    # (AMQP 1.0 2.6.3; frame by frame in test_broker_unsubscribe_unknown.py)
    with pytest.raises(LinkDetached, match="amqp:not-found"):
        c.create_receiver(None, name="nosuch", options=NullSource())
    c.close()


def test_changing_selector_replaces_durable_subscription(broker: Broker) -> None:
    c = connect(broker, "replace-client")
    r = c.create_receiver("rtopic", name="rsub", options=[Caps("topic"), Durable()])
    r.detach()
    c.create_sender("rtopic", options=Caps("topic")).send(Message(body="old", properties={"k": 1}))
    r = c.create_receiver("rtopic", name="rsub", options=[Caps("topic"), Durable(), Selector("k = 2")])
    assert bodies(r) == []
    c.close()


def test_shared_subscription_has_competing_consumers(broker: Broker) -> None:
    c1 = connect(broker, "shared-a")
    c2 = connect(broker, "shared-b")
    try:
        caps = Caps("topic", "shared", "global")
        r1 = c1.create_receiver("stopic", name="work|global-volatile1", options=caps, credit=10)
        r2 = c2.create_receiver("stopic", name="work|global-volatile1", options=caps, credit=10)
        pub = c1.create_sender("stopic", options=Caps("topic"))
        for i in range(10):
            pub.send(Message(body=i))
        got1, got2 = bodies(r1), bodies(r2)
        assert sorted(got1 + got2) == list(range(10))
        assert got1 and got2
    finally:
        c1.close()
        c2.close()


def test_shared_durable_subscription_survives_with_link_name_forms(broker: Broker) -> None:
    c = connect(broker, "sd-client")
    caps = [Caps("topic", "shared"), Durable()]
    r1 = c.create_receiver("sdtopic", name="sd", options=caps)
    r2 = c.create_receiver("sdtopic", name="sd|2", options=caps)
    r1.detach()
    r2.detach()
    c.create_sender("sdtopic", options=Caps("topic")).send(Message(body="kept"))
    r = c.create_receiver("sdtopic", name="sd", options=caps)
    assert bodies(r) == ["kept"]
    c.close()


def test_unsubscribe_while_active_is_refused_and_keeps_subscription(broker: Broker) -> None:
    active = connect(broker, "busy-client")
    active.create_receiver("btopic", name="busy", options=[Caps("topic"), Durable()])
    other = connect(broker, "busy-client-2")
    try:
        # the same container id is needed for the lookup: use a second connection of it
        look_conn = connect(broker, "busy-client")
        look = look_conn.create_receiver(None, name="busy", options=NullSource())
        assert look.link.remote_source.address == "btopic"
        look.close()
        assert look.link.remote_condition is not None
        assert look.link.remote_condition.name == "amqp:resource-locked"
        assert broker.run_soon(lambda: len(broker.core.router.subscriptions)) == 1  # type: ignore[union-attr]
        look_conn.close()
    finally:
        other.close()
        active.close()
