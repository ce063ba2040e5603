"""Hostile input against the broker as a subprocess with its defaults (issue 18).

Each attack runs against a fresh ``python -m amqp_jms.broker``; the test asserts that the attack
is refused or bounded, that the broker's memory stays bounded (``/proc/<pid>/status``), and that an
innocent client's round trip stays under a second meanwhile. Bounded in size so the module runs
in well under a minute.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hostile_helpers import SASL_HEADER, SASL_INIT, BrokerProcess, drain, round_trip, sasl_frame

from amqp_jms.types import Int, Long, Symbol, UInt

pytestmark = pytest.mark.skipif(not __import__("os").path.exists("/proc/self/status"), reason="needs /proc")


@pytest.fixture
def proc() -> Iterator[BrokerProcess]:
    p = BrokerProcess()
    try:
        yield p
    finally:
        p.stop()


@pytest.mark.parametrize(
    "response",
    [UInt(100_000_000), Int(-1), Long(2**40), 1.5e9, "100000000", [b"x"] * 3],
    ids=["uint", "negative", "long", "float", "string", "list"],
)
def test_sasl_init_with_a_non_binary_response_is_refused_without_allocating(
    proc: BrokerProcess, response: object
) -> None:
    before = proc.rss_mb()
    sock = proc.socket()
    sock.sendall(SASL_HEADER + sasl_frame(SASL_INIT, [Symbol("PLAIN"), response]))
    data, closed = drain(sock, 5)
    sock.close()
    assert closed, "a malformed SASL init must end the connection"
    assert data.startswith(SASL_HEADER)
    assert proc.alive()
    assert proc.peak_mb() - before < 20, f"peak RSS {before:.0f} -> {proc.peak_mb():.0f} MB"
    assert round_trip(proc.url) < 1.0
    assert "Traceback" not in proc.stop()
