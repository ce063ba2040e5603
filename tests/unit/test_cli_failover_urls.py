"""The CLI adds its own client options to the ``--url`` a user gives (management verbs:
``jms.sendTimeout`` from ``--timeout``; the demo: ``jms.forceAsyncSend``). A failover URL
must come out as one the failover parser accepts, with the option applied to every server, and
an option the user set must win where the CLI only supplies a default."""

from __future__ import annotations

import argparse

import pytest

from amqp_jms.cli.demo import _async_sends
from amqp_jms.cli.manage import _url
from amqp_jms.provider.config import parse_url
from amqp_jms.provider.failover.uri import parse_failover_url, with_client_options
from amqp_jms.spark.failover import append_client_options

FAILOVER_FORMS = [
    "failover:(amqp://a:5672?amqp.idleTimeout=1000)",
    "failover:amqp://a:5672",
    "failover:amqp://a:5672?amqp.idleTimeout=1000,amqp://b:5673",
    "failover://(amqp://a:5672,amqp://b:5673)",
    "failover:(amqp://a:5672,amqp://b:5673)?failover.maxReconnectAttempts=3",
]


def _verb_url(url: str, timeout: float = 5.0) -> str:
    return _url(argparse.Namespace(url=url, timeout=timeout))


@pytest.mark.parametrize("url", FAILOVER_FORMS)
def test_management_verbs_put_their_send_timeout_on_every_server(url: str) -> None:
    config = parse_failover_url(_verb_url(url))
    assert [s.send_timeout_ms for s in config.servers] == [5000] * len(config.servers)
    assert config.servers[0].host == "a" and config.servers[0].port == 5672


def test_a_server_uri_keeps_its_own_options() -> None:
    config = parse_failover_url(_verb_url("failover:(amqp://a:5672?amqp.idleTimeout=1000,amqp://b)"))
    a, b = config.servers
    assert a.idle_timeout_ms == 1000 and b.idle_timeout_ms != 1000


@pytest.mark.parametrize("url", [
    "failover:(amqp://a:5672)?jms.sendTimeout=9000",
    "amqp://a:5672?jms.sendTimeout=9000",
])
def test_a_send_timeout_the_user_set_wins_over_the_verbs_default(url: str) -> None:
    out = _verb_url(url)
    config = parse_failover_url(out).servers[0] if out.startswith("failover") else parse_url(out)
    assert config.send_timeout_ms == 9000


def test_plain_url_gets_the_option_on_its_query() -> None:
    assert _verb_url("amqp://user:pw@h:5672") == "amqp://user:pw@h:5672?jms.sendTimeout=5000"
    assert parse_url(_verb_url("amqp://h?amqp.idleTimeout=1000")).send_timeout_ms == 5000


@pytest.mark.parametrize("url", FAILOVER_FORMS)
def test_demo_async_sends_reach_every_server(url: str) -> None:
    config = parse_failover_url(_async_sends(url))
    assert all(s.force_async_send for s in config.servers)


def test_amqp_and_transport_options_are_nested_on_a_failover_url() -> None:
    """The failover URL's top level refuses amqp.*/transport.*: they go as failover.nested.*."""
    out = with_client_options("failover:amqp://a,amqp://b", [("amqp.idleTimeout", "777")])
    assert out == "failover:(amqp://a,amqp://b)?failover.nested.amqp.idleTimeout=777"
    assert [s.idle_timeout_ms for s in parse_failover_url(out).servers] == [777, 777]


def test_keep_existing_sees_a_servers_own_option() -> None:
    url = "failover:(amqp://a?amqp.idleTimeout=1000,amqp://b)"
    assert with_client_options(url, [("amqp.idleTimeout", "5")], keep_existing=True) == url


def test_the_spark_source_uses_the_same_rule() -> None:
    assert append_client_options is with_client_options
