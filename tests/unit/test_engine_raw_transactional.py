"""``transactional_state`` / ``set_transactional_state``: the transactional-state of a transfer
or disposition, read and written in place on proton-c (every transacted send and acknowledgement
of the client, and every transacted transfer the broker takes, goes through them).

Two proton engines talk over memory: what one side writes must be what proton's own Python
layer decodes on the other (``Disposition.data``), and what proton's layer writes must be what
the raw reader reads, hostile forms included (they come back ``MALFORMED``, never an exception).
"""

from __future__ import annotations

from typing import Any

import pytest
from proton import Collector, Connection, Delivery, Described, Receiver, Transport, ulong

from amqp_jms.engine.raw import (
    ACCEPTED,
    MALFORMED,
    NO_OUTCOME,
    TRANSACTIONAL_STATE,
    set_transactional_state,
    transactional_state,
)


class _Pair:
    """A sender and a receiver link over two in-memory transports."""

    def __init__(self) -> None:
        self.c1, self.c2 = Connection(), Connection()
        self.t1, self.t2 = Transport(), Transport(Transport.SERVER)
        self.t1.bind(self.c1)
        self.t2.bind(self.c2)
        self.collector = Collector()
        self.c2.collect(self.collector)
        self.c1.open()
        s1 = self.c1.session()
        s1.open()
        self.snd = s1.sender("tx")
        self.snd.open()
        self.pump()
        self.c2.open()
        s2 = self.c2.session_head(0)
        assert s2 is not None
        s2.open()
        rcv = self.c2.link_head(0)
        assert isinstance(rcv, Receiver)
        self.rcv = rcv
        self.rcv.open()
        self.rcv.flow(10)
        self.pump()

    def pump(self) -> None:
        for _ in range(4):
            for a, b in ((self.t1, self.t2), (self.t2, self.t1)):
                n = a.pending()
                out = a.peek(n) if n > 0 else None
                if out:
                    b.push(out)
                    a.pop(n)

    def received(self) -> Delivery:
        self.pump()
        d = self.rcv.current
        assert d is not None
        self.rcv.advance()
        return d


def test_a_state_written_in_place_is_what_proton_decodes_on_the_other_side() -> None:
    p = _Pair()
    for txn, outcome in ((b"txn:1", NO_OUTCOME), (b"\x00\xff" * 20, ACCEPTED)):
        d = p.snd.delivery(txn.hex())
        set_transactional_state(d._impl, txn, outcome)
        p.snd.send(b"m")
        p.snd.advance()
        got = p.received()
        assert got.remote_state == TRANSACTIONAL_STATE
        expected: list[Any] = [txn] if outcome == NO_OUTCOME else [txn, Described(ulong(ACCEPTED), [])]
        assert got.remote.data == expected
        assert transactional_state(got._impl) == (txn, outcome)


def test_a_disposition_written_in_place_is_read_back_by_the_sender() -> None:
    p = _Pair()
    d = p.snd.delivery("a")
    p.snd.send(b"m")
    p.snd.advance()
    got = p.received()
    set_transactional_state(got._impl, b"txn:7", ACCEPTED)
    p.pump()
    assert d.remote_state == TRANSACTIONAL_STATE
    assert transactional_state(d._impl) == (b"txn:7", ACCEPTED)
    assert d.remote.data == [b"txn:7", Described(ulong(ACCEPTED), [])]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ([b"t", Described(ulong(0x25), [None])], (b"t", 0x25)),  # rejected: the caller reads more
        ([b"t", None], (b"t", NO_OUTCOME)),
        ([None], (None, NO_OUTCOME)),
        ([], (None, NO_OUTCOME)),
        (["a string id"], (None, MALFORMED)),
        ([b"t", "not described"], (b"t", MALFORMED)),
        ([b"t", Described("symbolic", [])], (b"t", MALFORMED)),
        ({"a": 1}, (None, MALFORMED)),
    ],
)
def test_states_proton_writes_are_read_the_same_hostile_ones_are_malformed(data: Any, expected: Any) -> None:
    p = _Pair()
    d = p.snd.delivery("h")
    d.local.data = data
    d.update(TRANSACTIONAL_STATE)
    p.snd.send(b"m")
    p.snd.advance()
    got = p.received()
    assert transactional_state(got._impl) == expected
