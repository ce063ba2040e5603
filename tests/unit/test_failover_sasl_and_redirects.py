"""Which refused logins and redirects failover follows (Qpid JMS's FailoverProvider and
AmqpSaslAuthenticator, FailoverRedirectTest): a SASL sys-temp outcome is the server's temporary
trouble and is retried; auth, sys and sys-perm are final. Against the scripted peer, which
answers the first connections' logins with a chosen sasl-code.
"""

from __future__ import annotations

import time

import pytest

from amqp_jms import ConnectionFactory, JMSException, JMSSecurityException, JMSSecuritySaslException
from amqp_jms.provider.config import parse_url
from amqp_jms.provider.errors import RedirectedException
from amqp_jms.provider.failover import alternates_from_open, parse_failover_url
from amqp_jms.provider.failover.provider import FailoverProvider
from amqp_jms.testing.peer import TestPeer

FAST = "failover.initialReconnectDelay=0&failover.reconnectDelay=20&failover.maxReconnectDelay=100" \
       "&jms.requestTimeout=5000&jms.closeTimeout=1000"


def test_sys_temp_login_refusal_is_retried_and_the_connection_works() -> None:
    with TestPeer(sasl_outcomes=[4]) as peer:
        peer.expect_open()
        peer.expect_begin()
        with ConnectionFactory(f"failover:({peer.url})?{FAST}").create_connection() as conn:
            conn.start()  # the first login is refused with sys-temp, the retry logs in
            conn.create_session()
            peer.wait()
        assert not peer.errors


@pytest.mark.parametrize("code", [1, 2, 3])
def test_final_login_refusal_stops_failover_at_once(code: int) -> None:
    # a second connection would log in: had failover retried, the creation would succeed
    with TestPeer(sasl_outcomes=[code]) as peer:
        started = time.monotonic()
        with pytest.raises(JMSSecurityException) as info:
            ConnectionFactory(f"failover:({peer.url})?{FAST}").create_connection().start()
        assert time.monotonic() - started < 3
    assert isinstance(info.value, JMSSecuritySaslException)
    assert info.value.outcome == code and not info.value.sys_temp_failure


def test_without_failover_a_refused_login_carries_its_sasl_code() -> None:
    with TestPeer(sasl_outcomes=[4]) as peer:
        with pytest.raises(JMSSecuritySaslException) as info:
            ConnectionFactory(peer.url).create_connection().start()
    assert info.value.sys_temp_failure
    assert "sys-temp" in str(info.value)


@pytest.mark.parametrize("allow", [None, "false", "true"])
def test_redirect_from_amqps_to_amqp_needs_allow_non_secure_redirects(allow: str | None) -> None:
    """amqp.allowNonSecureRedirects (default false), Qpid JMS's AmqpRedirect rule: a redirect
    from a secure connection to a plain amqp server is ignored (the list is unchanged) unless
    the option is true; it is an ordinary amqp.* option, per server or nested."""
    query = "" if allow is None else f"?failover.nested.amqp.allowNonSecureRedirects={allow}"
    cfg = parse_failover_url(f"failover:(amqps://secure:5671){query}")
    provider = FailoverProvider(cfg)
    redirect = RedirectedException("moved", "amqp:connection:redirect",
                                   {"network-host": "plain", "port": 5672, "scheme": "amqp"})
    provider.follow_redirect(redirect, cfg.servers[0])
    hosts = [(s.scheme, s.host) for s in provider.servers]
    if allow == "true":
        assert hosts == [("amqp", "plain"), ("amqps", "secure")]
    else:
        assert hosts == [("amqps", "secure")]


def test_allow_non_secure_redirects_is_a_known_per_server_option() -> None:
    cfg = parse_failover_url("failover:(amqps://a:5671?amqp.allowNonSecureRedirects=true,amqps://b:5671)")
    assert [s.allow_non_secure_redirects for s in cfg.servers] == [True, False]
    assert parse_url("amqps://a:5671").allow_non_secure_redirects is False
    with pytest.raises(JMSException, match=r"amqp\.allowNonSecureRedirect'"):
        parse_url("amqps://a:5671?amqp.allowNonSecureRedirect=true")  # misspelt: refused


@pytest.mark.parametrize("allow", [False, True])
def test_an_insecure_server_advertised_in_open_follows_the_same_option(allow: bool) -> None:
    # FailoverWithAmqpOpenProvidedServerListIntegrationTest
    # .testFailover{Ignores,Accepts}InsecureServerWhen{Not,}ConfiguredToAllow
    secure = parse_url(f"amqps://a:5671?amqp.allowNonSecureRedirects={str(allow).lower()}")
    entry = {"network-host": "plain", "port": 5672, "scheme": "amqp"}
    hosts = [s.host for s in alternates_from_open({"failover-server-list": [entry]}, secure)]
    assert hosts == (["plain"] if allow else [])
