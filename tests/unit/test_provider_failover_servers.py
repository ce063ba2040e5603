"""The failover server list: duplicates (Qpid JMS FailoverUriPoolTest), an Open's
failover-server-list per amqpOpenServerListAction (FailoverWithAmqpOpenProvidedServerListIntegrationTest)
and redirect maps (AmqpRedirect, FailoverRedirectTest)."""

from __future__ import annotations

from typing import Any

import pytest
from proton import symbol

from amqp_jms.exceptions import JMSException
from amqp_jms.provider.config import ConnectionConfig, parse_url
from amqp_jms.provider.failover import (
    ServerListAction,
    alternates_from_open,
    parse_failover_url,
    server_from_redirect,
    update_server_list,
)
from amqp_jms.provider.failover.servers import add_first, add_servers, remove_server, same_server


def _hosts(servers: tuple[ConnectionConfig, ...]) -> list[str]:
    return [f"{s.host}:{s.port}" for s in servers]


def test_duplicates_not_added_when_query_present() -> None:
    # testDuplicatesNotAddedWhenQueryPresent
    pool = add_servers((), [parse_url("amqp://localhost:5671?transport.tcpNoDelay=true")])
    pool = add_servers(pool, [parse_url("amqp://localhost:5672?transport.tcpNoDelay=true")])
    pool = add_servers(pool, [parse_url("amqp://localhost:5672?transport.tcpNoDelay=false")])
    assert _hosts(pool) == ["localhost:5671", "localhost:5672"]
    assert pool[1].transport.tcp_no_delay  # the first entry stays as it was


def test_no_host_resolution_is_performed() -> None:
    # testNoHostResolutionPerformedFilterDuplicatesOnly, testLoopBackAndLocalHostAllowedInSamePool
    pool = add_servers(
        (),
        [
            parse_url(u)
            for u in (
                "amqp://127.0.0.1:5672",
                "amqp://127.0.0.1:5672",
                "amqp://localhost:5672",
                "amqp://localhost:5673",
                "amqp://localhost:5672",
            )
        ],
    )
    assert _hosts(pool) == ["127.0.0.1:5672", "localhost:5672", "localhost:5673"]


def test_duplicates_not_added_when_case_is_different() -> None:
    # testDuplicatesNotAddedWhenCaseIsDifferent(AndQueryStringPresent)
    urls = [
        "amqp://somerandomhostname:5672?transport.tcpNoDelay=true",
        "amqp://SomerandomHostname:5672",
        "amqp://SOMERANDOMHOSTNAME:5672?transport.tcpNoDelay=false",
        "amqp://SOMERANDOMHOSTNAME2:5672",
    ]
    assert _hosts(add_servers((), [parse_url(u) for u in urls])) == [
        "somerandomhostname:5672",
        "somerandomhostname2:5672",
    ]
    # parse_url lowers the host; a server learnt from a peer may not be lowered
    mixed = ConnectionConfig(host="SomeRandomHost")
    assert add_servers((ConnectionConfig(host="someRANDOMhost"),), [mixed])[0].host == "someRANDOMhost"
    # the scheme does not count either (host and port name the server)
    assert same_server(parse_url("amqp://a:5671"), parse_url("amqps://A:5671"))


def test_add_first_and_remove() -> None:
    # testAddFirst, testDuplicatesNotAddedByAddFirst, testRemoveHostIgnoresCaseInHostname
    pool = tuple(parse_url(f"amqp://h{i}:5672") for i in range(3))
    assert _hosts(add_first(pool, parse_url("amqp://new:5672")))[0] == "new:5672"
    assert add_first(pool, parse_url("amqp://H2:5672?amqp.idleTimeout=1")) == pool  # not moved
    assert _hosts(remove_server(pool, parse_url("amqp://H1:5672"))) == ["h0:5672", "h2:5672"]
    assert remove_server(pool, parse_url("amqp://h1:9999")) == pool


# -- failover-server-list in the Open ----------------------------------------------------------
CONNECTED = parse_failover_url(
    "failover:(amqp://localhost:5672,amqp://original2:5672)?failover.nested.amqp.idleTimeout=12345"
).servers
OFFER = [
    {symbol("network-host"): "backup1", symbol("port"): 5673},
    {symbol("network-host"): "backup2", symbol("port"): "5674", symbol("hostname"): "vhost2"},
]


def _open(entries: Any) -> dict[Any, Any]:
    return {symbol("failover-server-list"): entries}


def test_replace_keeps_the_connected_server_first() -> None:
    # testFailoverHandlesServerProvidedFailoverListReplace
    alts = alternates_from_open(_open(OFFER), CONNECTED[0])
    new = update_server_list(CONNECTED, CONNECTED[0], alts, ServerListAction.REPLACE)
    assert _hosts(new) == ["localhost:5672", "backup1:5673", "backup2:5674"]
    # a list naming the connected server does not duplicate it
    again = alternates_from_open(_open([{"network-host": "LOCALHOST", "port": 5672}, *OFFER]), CONNECTED[0])
    assert _hosts(update_server_list(CONNECTED, CONNECTED[0], again, ServerListAction.REPLACE)) == _hosts(new)


def test_add_appends_new_servers() -> None:
    # testFailoverHandlesServerProvidedFailoverListAdd
    alts = alternates_from_open(_open([*OFFER, {"network-host": "original2", "port": 5672}]), CONNECTED[0])
    new = update_server_list(CONNECTED, CONNECTED[0], alts, ServerListAction.ADD)
    assert _hosts(new) == ["localhost:5672", "original2:5672", "backup1:5673", "backup2:5674"]


def test_ignore_and_an_empty_list_change_nothing() -> None:
    # testFailoverHandlesServerProvidedFailoverListIgnore
    alts = alternates_from_open(_open(OFFER), CONNECTED[0])
    assert update_server_list(CONNECTED, CONNECTED[0], alts, ServerListAction.IGNORE) == CONNECTED
    for action in ServerListAction:
        assert update_server_list(CONNECTED, CONNECTED[0], (), action) == CONNECTED


def test_learnt_servers_inherit_the_connected_servers_settings_and_take_the_hostname_as_vhost() -> None:
    # testFailoverHandlesServerProvidedFailoverListWithHostname; AmqpRedirect.toURI
    b1, b2 = alternates_from_open(_open(OFFER), CONNECTED[0])
    assert b1.idle_timeout_ms == b2.idle_timeout_ms == 12345  # the nested options came along
    assert (b1.vhost, b2.vhost) == (None, "vhost2")
    assert b1.scheme == "amqp"


def test_invalid_entries_are_skipped() -> None:
    entries = [
        {"port": 5672},  # no network-host
        {"network-host": "", "port": 5672},
        {"network-host": "x", "port": "many"},
        {"network-host": "x", "port": 70000},
        {"network-host": "x", "port": 5672, "scheme": "stomp"},  # not a transport we have
        "not a map",
        {"network-host": "good", "port": 5680},
    ]
    assert _hosts(alternates_from_open(_open(entries), CONNECTED[0])) == ["good:5680"]
    assert alternates_from_open(None, CONNECTED[0]) == ()
    assert alternates_from_open({"other": 1}, CONNECTED[0]) == ()
    assert alternates_from_open(_open("amqp://x"), CONNECTED[0]) == ()


def test_a_websocket_entry_keeps_its_path() -> None:
    # Qpid JMS's AmqpRedirect takes ws/wss beside amqpws/amqpwss, and a path for them
    entries = [{"network-host": "edge", "port": 443, "scheme": "wss", "path": "/$servicebus/websocket"},
               {"network-host": "edge2", "port": 80, "scheme": "amqpws"}]
    wss, ws = alternates_from_open(_open(entries), CONNECTED[0])
    assert (wss.scheme, wss.path, wss.address) == ("amqpwss", "/$servicebus/websocket",
                                                   "amqpwss://edge:443/$servicebus/websocket")
    assert (ws.scheme, ws.path) == ("amqpws", "/")


def test_insecure_servers_are_ignored_from_a_secure_connection() -> None:
    # testFailoverIgnoresInsecureServerWhenNotConfiguredToAllow
    secure = parse_url("amqps://localhost:5671")
    entry = {"network-host": "plain", "port": 5672, "scheme": "amqp"}
    assert alternates_from_open(_open([entry]), secure) == ()
    with pytest.raises(JMSException, match="refusing to move from amqps to amqp"):
        server_from_redirect(entry, secure)
    # testFailoverAcceptsInsecureServerWhenConfiguredToAllow
    assert not server_from_redirect(entry, secure, allow_insecure=True).secure
    # no scheme given: the current one
    assert server_from_redirect({"network-host": "s", "port": 5671}, secure).secure


def test_a_redirect_goes_first() -> None:
    # FailoverRedirectTest.testFailoverHandlesRedirection: the target is tried next
    target = server_from_redirect({"network-host": "elsewhere", "port": 5672, "hostname": "vh"}, CONNECTED[0])
    pool = add_first(CONNECTED, target)
    assert _hosts(pool)[0] == "elsewhere:5672" and pool[0].vhost == "vh"
