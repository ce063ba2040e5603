"""Failed logins are rate-limited per source address: a password cannot be guessed at line speed.

A raw SASL client (one TCP connection per attempt, as a guesser would) fires wrong PLAIN
passwords for up to 5 s; only ``max_failed_logins`` of them are ever checked, the rest are
refused with ``sys-temp`` (even the right password, while the address is locked out), and the
right password works again once the window has passed. The hammering test's window (60 s) is
longer than its loop, so a slow machine cannot see the window end mid-loop.
"""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest
from proton import Data

from amqp_jms import ConnectionFactory, JMSException, JMSSecurityException
from amqp_jms.broker.protocol.sasl import SASL_HEADER, _frame
from amqp_jms.broker.protocol.terminus import data_object

_INIT = 0x41


def _read_frame(sock: socket.socket) -> Any:
    head = b""
    while len(head) < 8:
        chunk = sock.recv(8 - len(head))
        if not chunk:
            raise ConnectionError("closed")
        head += chunk
    size = int.from_bytes(head[:4], "big")
    body = b""
    while len(body) < size - 8:
        chunk = sock.recv(size - 8 - len(body))
        if not chunk:
            raise ConnectionError("closed")
        body += chunk
    d = Data()
    d.decode(body[(head[4] * 4 - 8):])
    return data_object(d)


def plain_login(port: int, user: str, password: str) -> int:
    """One PLAIN login; returns the sasl-outcome code (0 ok, 1 auth, 4 sys-temp)."""
    from proton import symbol

    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(SASL_HEADER)
        assert s.recv(8) == SASL_HEADER
        _read_frame(s)  # sasl-mechanisms
        s.sendall(_frame(_INIT, [symbol("PLAIN"), f"\0{user}\0{password}".encode()]))
        outcome = _read_frame(s)
        return int(outcome.value[0])


def test_two_thousand_wrong_passwords_in_five_seconds_are_not_possible(broker_factory: Any) -> None:
    b = broker_factory(users={"alice": "right"}, max_failed_logins=10, failed_login_window_s=60.0)
    codes: list[int] = []
    start = time.monotonic()
    while len(codes) < 2000 and time.monotonic() - start < 5.0:
        codes.append(plain_login(b.port, "alice", f"guess{len(codes)}"))
    assert codes.count(1) == 10, "only max_failed_logins passwords were checked"
    assert set(codes[10:]) == {4}, "the rest were refused (sys-temp) before any check"
    assert len(codes) > 20  # the loop really did hammer
    # locked out: even the right password is not looked at, and the JMS client says why
    assert plain_login(b.port, "alice", "right") == 4
    conn = ConnectionFactory(b.url, username="alice", password="right").create_connection()
    with pytest.raises(JMSSecurityException, match="SASL outcome sys-temp") as err:
        conn.start()
    conn.close()
    assert getattr(err.value, "sys_temp_failure", None) is True  # temporary: failover retries


def test_the_lockout_ends_after_the_window(broker_factory: Any) -> None:
    b = broker_factory(users={"alice": "right"}, max_failed_logins=3, failed_login_window_s=1.0)
    assert [plain_login(b.port, "alice", "wrong") for _ in range(4)] == [1, 1, 1, 4]
    time.sleep(1.1)
    assert plain_login(b.port, "alice", "right") == 0
    with ConnectionFactory(b.url, username="alice", password="right").create_connection() as conn:
        conn.start()


def test_successful_logins_are_not_limited(broker_factory: Any) -> None:
    b = broker_factory(users={"alice": "right"}, max_failed_logins=3, failed_login_window_s=60.0)
    assert all(plain_login(b.port, "alice", "right") == 0 for _ in range(20))
    with pytest.raises(JMSException):
        ConnectionFactory(b.url, username="alice", password="wrong").create_connection().start()
