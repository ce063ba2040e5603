"""Which refused logins and redirects failover follows (Qpid JMS's FailoverProvider and
AmqpSaslAuthenticator, FailoverRedirectTest): a SASL sys-temp outcome is the server's temporary
trouble and is retried; auth, sys and sys-perm are final. Against the scripted peer, which
answers the first connections' logins with a chosen sasl-code.
"""

from __future__ import annotations

import time

import pytest

from amqp_jms import ConnectionFactory, JMSSecurityException, JMSSecuritySaslException
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
