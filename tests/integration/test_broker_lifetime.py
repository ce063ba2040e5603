"""Dynamic nodes live as long as the lifetime policy their creator asked for (AMQP core 3.5.10+).

Raw python-qpid-proton clients: the policy goes in the dynamic terminus' node properties.
"""

from __future__ import annotations

from typing import Any

import pytest
from proton import Described, Message, symbol, ulong
from proton.reactor import LinkOption
from proton.utils import BlockingConnection, LinkDetached
from test_broker_peer import Caps

from amqp_jms.broker import Broker

ON_CLOSE, ON_NO_LINKS, ON_NO_MESSAGES, ON_NO_LINKS_OR_MESSAGES = 0x2B, 0x2C, 0x2D, 0x2E


class Dynamic(LinkOption):
    """A dynamic source (receivers) or target (senders) asking for a lifetime policy."""

    def __init__(self, policy: int) -> None:
        self.policy = policy

    def apply(self, link: Any) -> None:
        term = link.source if link.is_receiver else link.target
        term.dynamic = True
        term.properties.put_object({symbol("lifetime-policy"): Described(ulong(self.policy), [])})


def exists(broker: Broker, address: str) -> bool:
    """Can a new client still attach to the temporary queue? (the probe link then ends)"""
    c = BlockingConnection(broker.url, timeout=10)
    try:
        c.create_sender(address, options=Caps("temporary-queue"))
        return True
    except LinkDetached as exc:
        assert "does not exist" in str(exc)
        return False
    finally:
        c.close()


def echoed_policy(term: Any) -> int:
    props = term.properties
    props.rewind()
    props.next()
    return int(props.get_object()[symbol("lifetime-policy")].descriptor)


def temp_receiver(conn: BlockingConnection, policy: int, credit: int = 10) -> tuple[Any, str]:
    opts = [Caps("temporary-queue"), Dynamic(policy)]
    r = conn.create_receiver(None, dynamic=True, credit=credit, options=opts)
    assert echoed_policy(r.link.remote_source) == policy
    return r, str(r.link.remote_source.address)


def held_after_its_creator(broker: Broker) -> tuple[BlockingConnection, str]:
    """A delete-on-no-messages node holding "one" and "two", sent over a second connection
    (returned) after the creator's connection has closed."""
    a = BlockingConnection(broker.url, timeout=10)
    b = BlockingConnection(broker.url, timeout=10)
    _, address = temp_receiver(a, ON_NO_MESSAGES, credit=0)
    s = b.create_sender(address, options=Caps("temporary-queue"))
    s.send(Message(body="one"))
    s.send(Message(body="two"))
    a.close()
    return b, address


def test_delete_on_close_deletes_when_the_creating_link_closes(broker: Broker) -> None:
    a = BlockingConnection(broker.url, timeout=10)
    b = BlockingConnection(broker.url, timeout=10)
    r, address = temp_receiver(a, ON_CLOSE)
    s = b.create_sender(address, options=Caps("temporary-queue"))
    s.send(Message(body="queued"))
    assert exists(broker, address)
    r.close()
    assert not exists(broker, address)  # B's sender is still attached: does not matter
    a.close()
    b.close()


def test_delete_on_no_links_lives_while_any_link_is_attached(broker: Broker) -> None:
    a = BlockingConnection(broker.url, timeout=10)
    b = BlockingConnection(broker.url, timeout=10)
    r, address = temp_receiver(a, ON_NO_LINKS)
    s = b.create_sender(address, options=Caps("temporary-queue"))
    r.close()
    a.close()  # the creator and its connection are gone ...
    s.send(Message(body="still there"))  # ... B's link keeps the node (accepted, not rejected)
    assert exists(broker, address)
    s.close()
    assert not exists(broker, address)
    b.close()


def test_delete_on_no_messages_outlives_its_creator_until_emptied(broker: Broker) -> None:
    b, address = held_after_its_creator(broker)  # creator gone, two messages held: the node stays
    assert exists(broker, address)
    c = b.create_receiver(address, options=Caps("temporary-queue"))
    assert c.receive(timeout=5).body == "one"
    c.accept()
    assert exists(broker, address)  # one still held
    assert c.receive(timeout=5).body == "two"
    c.accept()  # the last message left: the node goes, and its links with it
    with pytest.raises(LinkDetached, match="resource-deleted"):
        c.receive(timeout=5)
    assert not exists(broker, address)
    b.close()


def test_delete_on_no_links_or_messages_when_emptied(broker: Broker) -> None:
    a = BlockingConnection(broker.url, timeout=10)
    r, address = temp_receiver(a, ON_NO_LINKS_OR_MESSAGES)
    a.create_sender(address, options=Caps("temporary-queue")).send(Message(body="only"))
    assert r.receive(timeout=5).body == "only"
    r.accept()  # links remain, but no messages: deleted
    with pytest.raises(LinkDetached, match="resource-deleted"):
        r.receive(timeout=5)
    assert not exists(broker, address)
    a.close()


def test_delete_on_no_links_or_messages_when_unlinked(broker: Broker) -> None:
    a = BlockingConnection(broker.url, timeout=10)
    s = a.create_sender(None, options=[Caps("temporary-queue"), Dynamic(ON_NO_LINKS_OR_MESSAGES)])
    assert echoed_policy(s.link.remote_target) == ON_NO_LINKS_OR_MESSAGES
    address = str(s.link.remote_target.address)
    s.send(Message(body="held"))
    assert exists(broker, address)  # the creator is attached and a message is held
    s.close()  # no links left (the message does not keep it)
    assert not exists(broker, address)
    a.close()


def test_no_policy_means_delete_on_close(broker: Broker) -> None:
    a = BlockingConnection(broker.url, timeout=10)
    r = a.create_receiver(None, dynamic=True, options=Caps("temporary-queue"))
    assert echoed_policy(r.link.remote_source) == ON_CLOSE
    address = str(r.link.remote_source.address)
    r.close()
    assert not exists(broker, address)
    a.close()


def test_delete_on_no_messages_when_the_last_message_is_rejected(broker: Broker) -> None:
    a = BlockingConnection(broker.url, timeout=10)
    r, address = temp_receiver(a, ON_NO_MESSAGES)
    a.create_sender(address, options=Caps("temporary-queue")).send(Message(body="unwanted"))
    assert r.receive(timeout=5).body == "unwanted"
    r.reject()  # dead-lettered: it left the node all the same
    with pytest.raises(LinkDetached, match="resource-deleted"):
        r.receive(timeout=5)
    assert not exists(broker, address)
    a.close()


def test_delete_on_no_messages_keeps_a_node_whose_message_is_delivered_but_unsettled(broker: Broker) -> None:
    """A message a consumer holds unsettled still belongs to the node: accepting the one before it
    leaves the queue empty but must not delete the node (its consumer could still release it)."""
    b, address = held_after_its_creator(broker)
    c = b.create_receiver(address, credit=10, options=Caps("temporary-queue"))
    assert c.receive(timeout=5).body == "one"
    assert c.receive(timeout=5).body == "two"  # both delivered, neither settled
    c.accept()  # "one" settled: the queue is empty, "two" is still out with the consumer
    b.create_sender("lifetime-sync")  # a round trip on b: the broker has handled the accept
    assert exists(broker, address)
    c.accept()  # "two" settled: nothing is left, the node goes
    with pytest.raises(LinkDetached, match="resource-deleted"):
        c.receive(timeout=5)
    assert not exists(broker, address)
    b.close()
