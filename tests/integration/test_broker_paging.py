"""A queue paging to disk still behaves like one queue: browsers see all of it, and JMS priority
order (9..0, then FIFO) holds across its memory and disk parts. Raw python-qpid-proton clients.
"""

from __future__ import annotations

from typing import Any

from proton import Message, Timeout
from proton.utils import BlockingConnection
from test_broker_peer import Browse

PAYLOAD = "x" * 256


def fill(broker: Any, address: str) -> tuple[BlockingConnection, list[str]]:
    """300 priority-4 messages (most paged, memory_limit 20 kB), then 7, 7 and 9: the order due."""
    c = BlockingConnection(broker.url, timeout=10)
    s = c.create_sender(address)
    for i in range(300):
        s.send(Message(body=f"p4-{i:03d}{PAYLOAD}", priority=4))
    q = broker.run_soon(lambda: broker.core.router.queues[address])
    assert broker.run_soon(lambda: q.paged) > 200  # the precondition: most of it is on disk
    for body, prio in [("p7-a", 7), ("p9", 9), ("p7-b", 7)]:
        s.send(Message(body=body + PAYLOAD, priority=prio))
    expected = ["p9", "p7-a", "p7-b"] + [f"p4-{i:03d}" for i in range(300)]
    return c, expected


def read_all(receiver: Any, accept: bool, count: int) -> list[str]:
    """The ``count`` messages due, each waited for as long as a loaded machine may need (a
    1 s gap used to end the read early: a broker paging in from disk while the 2 cores are
    busy can take that long), then a short look for anything beyond them."""
    out: list[str] = []
    for _ in range(count):
        out.append(read_one(receiver, accept, timeout=10))
    try:
        extra = receiver.receive(timeout=0.5)
    except Timeout:
        return out
    return [*out, str(extra.body).removesuffix(PAYLOAD)]  # more than due: the caller's check fails


def test_browser_sees_paged_messages_in_delivery_order(broker_factory: Any) -> None:
    b = broker_factory(memory_limit=20_000)
    c, expected = fill(b, "paged-browse")
    browser = c.create_receiver("paged-browse", credit=50, options=Browse())
    assert read_all(browser, False, len(expected)) == expected
    browser.close()
    r = c.create_receiver("paged-browse", credit=50)  # browsing took nothing away
    assert read_all(r, True, len(expected)) == expected
    c.close()


def test_high_priority_arriving_while_paging_overtakes_lower_priority(broker_factory: Any) -> None:
    b = broker_factory(memory_limit=20_000)
    c, expected = fill(b, "paged-prio")
    r = c.create_receiver("paged-prio", credit=1)
    assert read_all(r, True, len(expected)) == expected
    c.close()


def test_high_priority_arrives_while_a_consumer_drains_a_paged_queue(broker_factory: Any) -> None:
    b = broker_factory(memory_limit=20_000)
    c = BlockingConnection(b.url, timeout=10)
    s = c.create_sender("paged-live")
    for i in range(300):
        s.send(Message(body=f"p0-{i:03d}{PAYLOAD}", priority=0))
    r = c.create_receiver("paged-live", credit=1)
    first = [read_one(r) for _ in range(5)]
    s.send(Message(body="urgent" + PAYLOAD, priority=9))
    rest = read_all(r, True, 300 - 5 + 1)
    # at most the one message already in flight (credit 1) comes before it
    assert "urgent" in rest[:2]
    assert first + [x for x in rest if x != "urgent"] == [f"p0-{i:03d}" for i in range(300)]
    c.close()


def read_one(receiver: Any, accept: bool = True, timeout: float = 10) -> str:
    m = receiver.receive(timeout=timeout)
    if accept:
        receiver.accept()
    return str(m.body).removesuffix(PAYLOAD)
