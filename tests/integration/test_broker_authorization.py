"""Authorization end to end: the JMS client against a broker whose rules give each team its queues.

alice produces orders, bob consumes them, carol (no roles) may do nothing, root manages (and
alone reads the dead-letter queue). Every refusal is a JMSSecurityException naming the address
and the permission; what is permitted keeps working on the same connection.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from amqp_jms import ConnectionFactory, JMSSecurityException, Queue, TextMessage, Topic
from amqp_jms.broker.routing.authorization import Authorization

USERS = {"alice": "a-pw", "bob": "b-pw", "carol": "c-pw", "root": "r-pw"}
RULES = Authorization.build(
    {"alice": ["producers"], "bob": ["consumers"], "root": ["admins"]},
    [
        ("#", {"send": ["admins"], "consume": ["admins"], "browse": ["admins"], "manage": ["admins"],
               "create_temporary": ["consumers", "admins"]}),
        ("orders.#", {"send": ["producers", "admins"], "consume": ["consumers", "admins"],
                      "browse": ["consumers", "admins"]}),
        ("prices", {"send": ["producers"], "consume": ["consumers"]}),
    ],
)


@pytest.fixture
def secured(broker_factory: Any) -> Any:
    return broker_factory(users=USERS, authorization=RULES)


@pytest.fixture
def session_of(secured: Any) -> Iterator[Any]:
    conns: list[Any] = []

    def make(user: str) -> Any:
        conn = ConnectionFactory(secured.url, username=user, password=USERS[user]).create_connection()
        conns.append(conn)
        conn.start()
        return conn.create_session()

    yield make
    for c in conns:
        c.close()


def test_permitted_send_and_consume(session_of: Any) -> None:
    alice, bob = session_of("alice"), session_of("bob")
    alice.create_producer(Queue("orders.eu")).send(alice.create_text_message("order 1"))
    m = bob.create_consumer(Queue("orders.eu")).receive(5000)
    assert isinstance(m, TextMessage) and m.get_text() == "order 1"


def test_refused_consume_names_address_and_permission(session_of: Any) -> None:
    alice = session_of("alice")
    with pytest.raises(JMSSecurityException, match=r"alice.*consume from .orders.eu.*consume") as e:
        alice.create_consumer(Queue("orders.eu"))
    assert e.value.error_code == "amqp:unauthorized-access"
    # the session and connection survive the refusal
    alice.create_producer(Queue("orders.eu")).send(alice.create_text_message("still fine"))


def test_refused_send(session_of: Any) -> None:
    bob = session_of("bob")
    with pytest.raises(JMSSecurityException, match=r"send to 'orders.eu'.*permission send"):
        bob.create_producer(Queue("orders.eu"))
    carol = session_of("carol")
    with pytest.raises(JMSSecurityException, match=r"carol.*send to 'payroll'"):
        carol.create_producer(Queue("payroll"))


def test_refused_attach_does_not_create_the_queue(secured: Any, session_of: Any) -> None:
    carol = session_of("carol")
    with pytest.raises(JMSSecurityException):
        carol.create_producer(Queue("made-up-by-carol"))
    assert secured.run_soon(lambda: secured.core.router.node_kind("made-up-by-carol")) is None


def test_anonymous_producer_is_checked_per_message(session_of: Any) -> None:
    alice, bob = session_of("alice"), session_of("bob")
    relay = alice.create_producer(None)
    relay.send(Queue("orders.us"), alice.create_text_message("allowed"))
    with pytest.raises(JMSSecurityException, match=r"send to 'payroll'.*permission send"):
        relay.send(Queue("payroll"), alice.create_text_message("refused"))
    relay.send(Queue("orders.us"), alice.create_text_message("allowed again"))
    c = bob.create_consumer(Queue("orders.us"))
    got = [c.receive(5000), c.receive(5000)]
    assert [m.get_text() for m in got if m is not None] == ["allowed", "allowed again"]


def test_browser_needs_browse(session_of: Any) -> None:
    alice, bob = session_of("alice"), session_of("bob")
    alice.create_producer(Queue("orders.b")).send(alice.create_text_message("look"))
    texts = [m.get_text() for m in bob.create_browser(Queue("orders.b")).get_enumeration()]
    assert texts == ["look"]
    with pytest.raises(JMSSecurityException, match=r"browse 'orders.b'.*permission browse"):
        list(alice.create_browser(Queue("orders.b")).get_enumeration())
    bob_prices = session_of("bob")  # prices grants consume but not browse
    with pytest.raises(JMSSecurityException, match="browse 'prices'"):
        list(bob_prices.create_browser(Queue("prices")).get_enumeration())


def test_topics_and_durable_subscriptions_need_consume(session_of: Any) -> None:
    alice, bob = session_of("alice"), session_of("bob")
    sub = bob.create_shared_durable_consumer(Topic("orders.events"), "bob-sub")
    alice.create_producer(Topic("orders.events")).send(alice.create_text_message("evt"))
    m = sub.receive(5000)
    assert m is not None and m.get_text() == "evt"
    with pytest.raises(JMSSecurityException, match=r"consume from 'orders\.events'"):
        alice.create_consumer(Topic("orders.events"))
    with pytest.raises(JMSSecurityException, match=r"consume from 'orders\.events'"):
        alice.create_shared_durable_consumer(Topic("orders.events"), "alice-sub")


def test_temporary_destinations(session_of: Any) -> None:
    bob, root, alice = session_of("bob"), session_of("root"), session_of("alice")
    tmp = bob.create_temporary_queue()  # consumers may create temporaries
    consumer = bob.create_consumer(tmp)  # the creator reads its own temporary
    root.create_producer(tmp).send(root.create_text_message("reply"))
    m = consumer.receive(5000)
    assert m is not None and m.get_text() == "reply"
    with pytest.raises(JMSSecurityException, match=r"create the temporary destination .*create_temporary"):
        alice.create_temporary_queue()
    with pytest.raises(JMSSecurityException, match="send to 'TempQueue"):
        alice.create_producer(tmp)  # the '#' rule gives send on temporaries to admins only


def test_dead_letter_queue_is_read_by_managers_only(session_of: Any) -> None:
    root, bob = session_of("root"), session_of("bob")
    root.create_producer(Queue("DLQ")).send(root.create_text_message("dead"))
    with pytest.raises(JMSSecurityException, match=r"'DLQ'.*manage"):
        bob.create_consumer(Queue("DLQ"))
    with pytest.raises(JMSSecurityException, match=r"'DLQ'.*manage"):
        list(bob.create_browser(Queue("DLQ")).get_enumeration())
    m = root.create_consumer(Queue("DLQ")).receive(5000)
    assert m is not None and m.get_text() == "dead"


def test_without_rules_everyone_logged_in_may_do_anything(broker_factory: Any) -> None:
    b = broker_factory(users=USERS)
    conn = ConnectionFactory(b.url, username="carol", password="c-pw").create_connection()
    try:
        conn.start()
        s = conn.create_session()
        s.create_producer(Queue("DLQ")).send(s.create_text_message("x"))
        assert s.create_consumer(Queue("DLQ")).receive(5000) is not None
    finally:
        conn.close()


def test_rules_without_users_are_refused_at_start() -> None:
    from amqp_jms.broker import Broker

    with pytest.raises(ValueError, match="authorization needs users"):
        Broker(authorization=RULES)  # PLAIN would take 'root' with any password


def test_in_prefix_mode_rules_name_destinations_not_prefixed_addresses(broker_factory: Any) -> None:
    # the client prefixes every address (queue://orders.eu, topic://orders.eu): the rules written
    # for orders.# still apply, and the dead-letter queue (queue://DLQ) is still managers' only
    b = broker_factory(users=USERS, authorization=RULES, address_prefixes=("queue://", "topic://"))
    conns = []
    try:
        def session(user: str) -> Any:
            conn = ConnectionFactory(b.url, username=user, password=USERS[user]).create_connection()
            conns.append(conn)
            conn.start()
            return conn.create_session()

        alice, bob = session("alice"), session("bob")
        alice.create_producer(Queue("orders.eu")).send(alice.create_text_message("o"))
        alice.create_producer(Topic("orders.news"))
        m = bob.create_consumer(Queue("orders.eu")).receive(5000)
        assert isinstance(m, TextMessage) and m.get_text() == "o"
        with pytest.raises(JMSSecurityException, match="consume"):
            bob.create_consumer(Queue("DLQ"))
        with pytest.raises(JMSSecurityException, match="send"):
            alice.create_producer(Queue("elsewhere"))
    finally:
        for c in conns:
            c.close()
