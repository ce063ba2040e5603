"""A ``failover:`` url in the ``jms`` source's options: accepted, client options moved where the
failover URL takes them, the receiver's own reconnect option refused (one policy reconnects),
and a url the failover parser refuses fails at planning time."""

from __future__ import annotations

import pytest

from amqp_jms.provider.failover.uri import parse_failover_url
from amqp_jms.spark.options import parse_options
from amqp_jms.spark.source import _redacted

_FO = "failover:(amqp://a:5672,amqp://b:5673)"


def test_failover_url_accepted_with_client_options_in_their_place() -> None:
    opts = parse_options(
        {
            "url": _FO + "?failover.reconnectDelay=50",
            "destination": "queue://q",
            # keys as Spark hands them: lower-cased
            "failover.maxreconnectattempts": "7",
            "jms.prefetchpolicy.all": "10",
            "amqp.idletimeout": "30000",
        }
    )
    config = parse_failover_url(opts.url)
    assert [(s.host, s.port) for s in config.servers] == [("a", 5672), ("b", 5673)]
    assert config.reconnect.max_reconnect_attempts == 7
    assert config.reconnect.reconnect_delay_ms == 50
    assert ("amqp.idleTimeout", "30000") in config.nested_options  # every server
    assert ("jms.prefetchPolicy.all", "10") in config.connection_options
    assert _redacted(opts.url) == "failover:(amqp://a:5672,amqp://b:5673)"


def test_failover_url_without_parentheses_takes_options_too() -> None:
    opts = parse_options({"url": "failover:amqp://a:5672", "failover.randomize": "true"})
    assert parse_failover_url(opts.url).reconnect.randomize is True


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"url": _FO, "reconnectTimeoutMs": "1000"}, "failover.maxReconnectAttempts"),
        ({"url": _FO + "?failover.bogus=1"}, "failover.bogus"),
        ({"url": _FO, "failover.maxreconnectattempts": "x"}, "maxReconnectAttempts"),
        ({"url": "amqp://a:5672", "failover.randomize": "true"}, "need a failover:"),
        ({"url": "failover:()"}, "option 'url'"),
    ],
)
def test_bad_failover_options_fail_naming_what(options: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match="jms data source") as info:
        parse_options(options)
    assert message in str(info.value)


def test_planning_check_gives_up_after_one_pass_over_unreachable_servers() -> None:
    """The failover provider's default is to try forever; the planning-time check must not."""
    import socket
    import time

    from amqp_jms.spark.source import check_connection

    ports = []
    for _ in range(2):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            ports.append(sock.getsockname()[1])
    url = f"failover:(amqp://127.0.0.1:{ports[0]},amqp://127.0.0.1:{ports[1]})"
    began = time.monotonic()
    with pytest.raises(ValueError, match=r"cannot connect to failover:\(amqp://127.0.0.1"):
        check_connection(parse_options({"url": url, "destination": "q"}))
    assert time.monotonic() - began < 10


def test_the_future_type_reaches_every_server_of_a_failover_url_and_a_plain_one() -> None:
    """``provider.futureType`` as Spark hands it (lower-cased) keeps its spelling and applies."""
    from amqp_jms.provider.config import parse_url

    opts = parse_options({"url": _FO, "destination": "queue://q", "provider.futuretype": "conservative"})
    assert [s.future_type for s in parse_failover_url(opts.url).servers] == ["conservative"] * 2
    plain = parse_options({"url": "amqp://a:5672", "destination": "queue://q",
                           "provider.futuretype": "balanced"})
    assert parse_url(plain.url).future_type == "balanced"
