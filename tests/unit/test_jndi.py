"""``amqp_jms.jndi``: jndi.properties read as Qpid JMS's JmsInitialContextFactory reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from amqp_jms import ConnectionFactory, Queue, Topic
from amqp_jms.jndi import InitialContext, NamingException, expand, read_properties

PROPS = r"""
# a Java service's file
connectionfactory.orders = amqp://${BH:-localhost}:5672?jms.prefetchPolicy.all=50
Connectionfactory.other: failover:(amqp://a:5672,amqp://b:5672)
property.connectionfactory.orders.clientID = billing
property.connectionfactory.orders.username = ${USER_X}
property.connectionfactory.orders.password = s\=cret
default.connectionfactory.redeliveryPolicy.maxRedeliveries = 4
queue.ordersQueue = orders
queue.long = a\
    b
topic.prices   market.prices
! another comment
USER_X = from-the-file
"""


def test_properties_syntax() -> None:
    p = read_properties(PROPS)
    assert p["queue.long"] == "ab" and p["topic.prices"] == "market.prices"
    assert p["property.connectionfactory.orders.password"] == "s=cret"
    assert read_properties("a\\u0041=x\\ty") == {"aA": "x\ty"}


def test_lookups_like_qpid_jms(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("USER_X", raising=False)
    monkeypatch.setenv("BH", "broker1")
    ctx = InitialContext(read_properties(PROPS))
    assert ctx.names() == ["long", "orders", "ordersQueue", "other", "prices"]
    f = ctx.lookup("orders")
    assert isinstance(f, ConnectionFactory) and f.url == "amqp://broker1:5672?jms.prefetchPolicy.all=50"
    cfg = f.config
    assert (cfg.client_id, cfg.username, cfg.password) == ("billing", "from-the-file", "s=cret")
    assert cfg.prefetch.queue_prefetch == 50 and cfg.redelivery.max_redeliveries == 4
    assert ctx.lookup("other").config.redelivery.max_redeliveries == 4  # the defaults apply to every one
    assert ctx.lookup("ordersQueue") == Queue("orders") and ctx.lookup("prices") == Topic("market.prices")
    assert ctx.lookup("dynamicQueues/x.y") == Queue("x.y") and ctx.lookup("dynamicTopics/t") == Topic("t")
    with pytest.raises(NamingException, match="'nope' is not bound"):
        ctx.lookup("nope")


def test_environment_wins_over_the_file_and_defaults_apply_last(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("USER_X", "from-env")
    assert expand("${USER_X}/${NONE:-dflt}/${K}", {"K": "k", "USER_X": "file"}) == "from-env/dflt/k"
    with pytest.raises(NamingException, match=r"\$\{MISSING\}"):
        expand("${MISSING}", {})


def test_without_factories_the_three_default_names_are_bound() -> None:
    ctx = InitialContext({"queue.q": "q"})
    for name in ("ConnectionFactory", "QueueConnectionFactory", "TopicConnectionFactory"):
        assert ctx.lookup(name).url == "amqp://localhost:5672"


def test_an_unknown_option_names_itself() -> None:
    ctx = InitialContext({"connectionfactory.f": "amqp://h", "property.connectionfactory.f.noSuchThing": "1"})
    with pytest.raises(NamingException, match="noSuchThing"):
        ctx.lookup("f")


def test_the_same_content_from_toml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BH", raising=False)
    f = tmp_path / "jndi.toml"
    f.write_text(
        '[connectionfactory]\norders = "amqp://${BH:-localhost}:5672"\n'
        '[property.connectionfactory.orders]\nclientID = "billing"\n"prefetchPolicy.all" = 7\n'
        '[queue]\nordersQueue = "orders"\n[topic]\nprices = "market.prices"\n')
    ctx = InitialContext(f)
    cf = ctx.lookup("orders")
    assert cf.url == "amqp://localhost:5672" and cf.config.client_id == "billing"
    assert cf.config.prefetch.queue_prefetch == 7
    assert ctx.lookup("ordersQueue") == Queue("orders") and ctx.lookup("prices") == Topic("market.prices")
    p = tmp_path / "jndi.properties"
    p.write_text("queue.a = b\n")
    assert InitialContext(p).lookup("a") == Queue("b")
    assert InitialContext({"java.naming.provider.url": str(p)}).lookup("a") == Queue("b")
    with pytest.raises(NamingException, match="cannot read"):
        InitialContext(tmp_path / "missing.properties")
    (tmp_path / "bad.toml").write_text("[x\n")
    with pytest.raises(NamingException, match="not valid TOML"):
        InitialContext(tmp_path / "bad.toml")
