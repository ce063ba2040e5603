"""failover: URL parsing (Qpid JMS FiloverProviderFactoryTest, FailoverProviderTest's option tests,
FailoverUriPoolTest's nested options, JmsConnectionFactory's composite URI rules)."""

from __future__ import annotations

import pytest

from amqp_jms.exceptions import JMSException
from amqp_jms.provider.config import ConnectionConfig, parse_url
from amqp_jms.provider.failover import (
    FailoverConfig,
    ReconnectPolicy,
    ServerListAction,
    is_failover_url,
    parse_failover_url,
)


def test_servers_in_order_with_scheme_defaults() -> None:
    cfg = parse_failover_url("failover:(amqp://a:5672,amqps://b:5671,amqp://c)")
    assert [(s.scheme, s.host, s.port) for s in cfg.servers] == [
        ("amqp", "a", 5672),
        ("amqps", "b", 5671),
        ("amqp", "c", 5672),
    ]
    assert cfg.servers[1].secure


def test_defaults_are_qpid_jms_defaults() -> None:
    # FiloverProviderFactoryTest.testCreateProviderInitializesToDefaults, FailoverProvider.DEFAULT_*
    p = parse_failover_url("failover:(amqp://a:5672)").reconnect
    assert p == ReconnectPolicy()
    assert (p.initial_reconnect_delay_ms, p.reconnect_delay_ms, p.max_reconnect_delay_ms) == (0, 10, 30000)
    assert (p.use_reconnect_back_off, p.reconnect_back_off_multiplier) == (True, 2.0)
    assert (p.max_reconnect_attempts, p.startup_max_reconnect_attempts) == (-1, -1)
    assert p.warn_after_reconnect_attempts == 10
    assert p.randomize is False
    assert p.amqp_open_server_list_action is ServerListAction.REPLACE


def test_every_failover_option_is_applied() -> None:
    # FiloverProviderFactoryTest.testCreateWithOptions
    p = parse_failover_url(
        "failover:(amqp://a:5672)?failover.initialReconnectDelay=1&failover.reconnectDelay=12"
        "&failover.maxReconnectDelay=30003&failover.startupMaxReconnectAttempts=3"
        "&failover.maxReconnectAttempts=4&failover.warnAfterReconnectAttempts=16"
        "&failover.useReconnectBackOff=false&failover.reconnectBackOffMultiplier=3.0"
        "&failover.randomize=true&failover.amqpOpenServerListAction=add"
    ).reconnect
    assert p == ReconnectPolicy(
        initial_reconnect_delay_ms=1,
        reconnect_delay_ms=12,
        max_reconnect_delay_ms=30003,
        startup_max_reconnect_attempts=3,
        max_reconnect_attempts=4,
        warn_after_reconnect_attempts=16,
        use_reconnect_back_off=False,
        reconnect_back_off_multiplier=3.0,
        randomize=True,
        amqp_open_server_list_action=ServerListAction.ADD,
    )


@pytest.mark.parametrize(
    "query",
    [
        "failover.unknown=true",  # FiloverProviderFactoryTest.testCreateProviderWithUnknownOption
        "jms.noSuchOption=1",
        "amqp.idleTimeout=1000",  # a server option belongs on a server URI or in failover.nested.*
        "foo=bar",
        "failover.nested.amqp.noSuchOption=1",
    ],
)
def test_unknown_options_are_refused_by_the_plain_url_rule(query: str) -> None:
    name = query.split("=")[0].removeprefix("failover.nested.")
    with pytest.raises(JMSException, match=f"unknown connection option '{name}'") as failover:
        parse_failover_url(f"failover:(amqp://a:5672)?{query}")
    if name == "jms.noSuchOption":  # the very message a plain URL gives: one rule
        with pytest.raises(JMSException) as plain:
            parse_url(f"amqp://a:5672?{query}")
        assert str(plain.value) == str(failover.value)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("failover.reconnectDelay=soon", "expected an integer"),
        ("failover.reconnectDelay=-5", "must not be negative"),
        ("failover.useReconnectBackOff=maybe", "expected true or false"),
        ("failover.reconnectBackOffMultiplier=x", "expected a number"),
        ("failover.reconnectBackOffMultiplier=0", "greater than 0"),
        ("failover.maxReconnectAttempts=-2", "-1 \\(no limit\\)"),
        # FailoverProviderTest.testSetInvalidAmqpOpenServerListActionThrowsIAE
        ("failover.amqpOpenServerListAction=MERGE", "expected one of REPLACE, ADD, IGNORE"),
    ],
)
def test_bad_values_name_the_option(query: str, message: str) -> None:
    with pytest.raises(JMSException, match=message) as info:
        parse_failover_url(f"failover:(amqp://a:5672)?{query}")
    assert query.split("=")[0] in str(info.value)


def test_server_list_action_is_case_insensitive() -> None:
    # FailoverProviderTest.testSetGetAmqpOpenServerListAction
    for raw, want in [("replace", "REPLACE"), ("Add", "ADD"), ("IGNORE", "IGNORE")]:
        cfg = parse_failover_url(f"failover:(amqp://a)?failover.amqpOpenServerListAction={raw}")
        assert cfg.reconnect.amqp_open_server_list_action.value == want


def test_nested_options_apply_to_every_server_over_its_own() -> None:
    # FiloverProviderFactoryTest.testNestedOptionsArePassedAlong,
    # FailoverUriPoolTest.testNestedOptionsAreApplied
    cfg = parse_failover_url(
        "failover:(amqp://a:5672?amqp.idleTimeout=5000&amqp.maxFrameSize=4096,amqp://b:5672)"
        "?failover.nested.amqp.idleTimeout=30000&failover.nested.transport.tcpNoDelay=false"
        "&failover.randomize=false"
    )
    assert cfg.nested_options == (("amqp.idleTimeout", "30000"), ("transport.tcpNoDelay", "false"))
    a, b = cfg.servers
    assert a.idle_timeout_ms == b.idle_timeout_ms == 30000  # nested wins, as Qpid JMS replaces
    assert a.max_frame_size == 4096 and b.max_frame_size == ConnectionConfig().max_frame_size
    assert not a.transport.tcp_no_delay and not b.transport.tcp_no_delay


def test_jms_options_configure_the_connection_on_every_server() -> None:
    cfg = parse_failover_url(
        "failover:(amqp://a,amqp://b)?jms.clientID=app&jms.prefetchPolicy.all=5&jms.username=u&jms.password=p"
    )
    assert cfg.connection_options[0] == ("jms.clientID", "app")
    for s in cfg.servers:
        assert (s.client_id, s.username, s.password) == ("app", "u", "p")
        assert s.prefetch.queue_prefetch == 5


def test_keyword_options_win_over_the_url() -> None:
    cfg = parse_failover_url(
        "failover:(amqp://a)?jms.clientID=url&failover.randomize=false",
        client_id="kw",
        **{"failover.randomize": True},
    )
    assert cfg.servers[0].client_id == "kw" and cfg.reconnect.randomize


def test_server_options_stay_on_their_server() -> None:
    cfg = parse_failover_url("failover:(amqps://a:5671?transport.verifyHost=false,amqps://b:5671)")
    assert not cfg.servers[0].transport.verify_host
    assert cfg.servers[1].transport.verify_host


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("failover:()", "names no server"),
        ("failover:(amqp://a,,amqp://b)", "empty server URI"),
        ("failover:(amqp://a", "parentheses do not match"),
        ("failover:(amqp://a)/path?x=1", "expected '\\?options'"),
        ("failover:(http://a)", "unsupported URL scheme 'http'"),
        ("failover:(failover:(amqp://a))", "unsupported URL scheme"),
        ("failover:(amqp://u:p@a)", "must not carry credentials"),  # as JmsConnectionFactory
        ("failover:(amqp://a?jms.clientID=x)", "belongs on the failover URL"),
        ("failover:(amqp://a)?failover.nested.jms.clientID=x", "cannot be nested"),
        ("failover:(amqp://a:notaport)", "invalid port"),
    ],
)
def test_malformed_urls_are_refused_with_the_reason(url: str, message: str) -> None:
    with pytest.raises(JMSException, match=message):
        parse_failover_url(url)


def test_a_bare_server_without_parentheses() -> None:
    # Qpid JMS reads failover:amqp://a:5672 as one server (its query is the server's)
    cfg = parse_failover_url("failover:amqp://a:5672?amqp.idleTimeout=1000")
    assert [(s.host, s.port, s.idle_timeout_ms) for s in cfg.servers] == [("a", 5672, 1000)]


def test_is_failover_url_and_the_value_is_frozen() -> None:
    assert is_failover_url("FAILOVER:(amqp://a)") and not is_failover_url("amqp://a")
    cfg = parse_failover_url("failover://(amqp://a)")
    assert isinstance(cfg, FailoverConfig)
    with pytest.raises(AttributeError):
        cfg.servers = ()  # type: ignore[misc]
    with pytest.raises(JMSException, match="not a failover URL"):
        parse_failover_url("amqp://a")


def test_every_failover_option_is_documented_with_its_default() -> None:
    """docs/client.md's Failover table names every failover.* option with the default in force."""
    import enum
    import re
    from pathlib import Path

    from amqp_jms.provider.failover.uri import _FAILOVER_OPTIONS, ReconnectPolicy

    doc = (Path(__file__).parents[2] / "docs" / "client.md").read_text()
    defaults = ReconnectPolicy()
    for name, (field_name, _) in _FAILOVER_OPTIONS.items():
        row = re.search(rf"^\| `{re.escape(name)}` \| ([^|]+) \|", doc, re.M)
        assert row is not None, f"{name} missing from docs/client.md"
        value = getattr(defaults, field_name)
        shown = value.value if isinstance(value, enum.Enum) else value
        expected = str(shown).lower() if isinstance(shown, bool) else str(shown)
        assert row.group(1).strip() == expected, name


def test_the_future_type_on_a_failover_url_applies_to_every_server() -> None:
    """Qpid JMS's failover factory reads ``provider.futureType`` from the failover URL itself."""
    cfg = parse_failover_url("failover:(amqp://a:1,amqp://b:2)?provider.futureType=progressive")
    assert [s.future_type for s in cfg.servers] == ["progressive", "progressive"]
    with pytest.raises(JMSException, match=r"provider\.futureType"):
        parse_failover_url("failover:(amqp://a:1)?provider.futureType=eager")
