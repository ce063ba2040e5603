"""codec_bench: amqp_jms.mapping encode+decode vs proton.Message build+encode+decode.

Six representative messages (one per JMS type, typical headers, 5 application properties,
100 B - 1 KB bodies). Per message and round, ours: ``encode(jms message)`` then ``decode(bytes)``
and read every header and property of the result; proton's: build the equivalent
``proton.Message``, ``encode()``, ``decode()`` into a fresh message and read every field and
property. Both in this run, in short batches back to back, timed in thread CPU time; the ratio is
the median over the pairs of batches of messages/s ours / messages/s proton. Goal: 3.

    .venv/bin/python benchmarks/codec_bench.py [--quick]
"""

from __future__ import annotations

import argparse
import gc
import itertools
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

import proton

from amqp_jms.destination import Queue, Topic
from amqp_jms.mapping import MappingContext, decode, encode
from amqp_jms.message import (
    BytesMessage,
    MapMessage,
    Message,
    ObjectMessage,
    StreamMessage,
    TextMessage,
)
from amqp_jms.types import Byte, Char, Float, Int, Short

GOAL = 3.0
NOW = 1_700_000_000_000


def _headers(m: Message, i: int) -> Message:
    m._message_id = f"ID:{uuid.UUID(int=i)}:1:1:{i}"
    m._timestamp = NOW
    m._expiration = NOW + 60_000
    m._destination = Queue("orders")
    m._reply_to = Topic("replies")
    m._correlation_id = f"ID:corr-{i}"
    m._priority = 6
    m._type = "order"
    m._props.update(
        {"customer": "ACME corp", "quantity": Int(42), "price": 19.99, "express": True, "region": "EU"}
    )
    return m


def jms_messages() -> list[Message]:
    text = TextMessage("hello, world! " * 20)  # 280 chars
    by = BytesMessage(bytes(range(256)) * 2)  # 512 B
    mp = MapMessage(
        {"name": "widget", "count": Int(3), "weight": Float(1.5), "code": Char("x"), "blob": b"\x00" * 64,
         "id": 1234567890123, "ok": False, "s": Short(7), "b": Byte(1), "note": "n" * 100}
    )  # fmt: skip
    st = StreamMessage(["a" * 50, Int(1), 2, 3.5, True, b"\x01" * 100, Char("c"), Short(9)])
    ob = ObjectMessage({"order": 7, "lines": [{"sku": "A-1", "qty": 2}, {"sku": "B-2", "qty": 1}],
                        "note": "x" * 200})  # fmt: skip
    plain = Message()
    return [_headers(m, i) for i, m in enumerate([text, by, mp, st, ob, plain])]


def read_jms(m: Message) -> int:
    """Read every header and property, as an application or a selector would."""
    n = 0
    for v in (
        m.get_jms_message_id(), m.get_jms_timestamp(), m.get_jms_correlation_id(), m.get_jms_reply_to(),
        m.get_jms_destination(), m.get_jms_delivery_mode(), m.get_jms_redelivered(), m.get_jms_type(),
        m.get_jms_expiration(), m.get_jms_delivery_time(), m.get_jms_priority(),
    ):  # fmt: skip
        n += v is not None
    for name in m.get_property_names():
        n += m.get_object_property(name) is not None
    return n


_ids = itertools.count()


def ours(msgs: list[Message], ctx: MappingContext) -> Callable[[], None]:
    def run() -> None:
        for m in msgs:
            m._message_id = f"ID:bench-host-4711-1:1:1:{next(_ids)}"  # a new id per send, as a producer does
            read_jms(decode(encode(m, context=ctx), context=ctx))

    return run


# -- proton: the same messages as proton.Message ------------------------------------------------


def _proton_body(m: Message) -> tuple[Any, int, str | None]:
    if isinstance(m, TextMessage):
        return m._text, 5, None
    if isinstance(m, BytesMessage):
        return m._body_bytes(), 3, "application/octet-stream"
    if isinstance(m, MapMessage):
        conv = {
            Int: proton.int32,
            Float: proton.float32,
            Char: proton.char,
            Short: proton.short,
            Byte: proton.byte,
        }
        return {k: conv.get(type(v), lambda x: x)(v) for k, v in m._map.items()}, 2, None
    if isinstance(m, StreamMessage):
        conv2 = {Int: proton.int32, Char: proton.char, Short: proton.short}
        return [conv2.get(type(v), lambda x: x)(v) for v in m._items], 4, None
    if isinstance(m, ObjectMessage):
        return m._object, 1, None
    return None, 0, None


def proton_specs(msgs: list[Message]) -> list[dict[str, Any]]:
    specs = []
    for m in msgs:
        body, code, ct = _proton_body(m)
        specs.append({"m": m, "body": body, "code": code, "ct": ct})
    return specs


def build_proton(spec: dict[str, Any]) -> proton.Message:
    m: Message = spec["m"]
    pm = proton.Message()
    pm.id = f"ID:bench-host-4711-1:1:1:{next(_ids)}"
    pm.durable = True
    pm.priority = m._priority
    pm.address = "orders"
    pm.reply_to = "replies"
    pm.correlation_id = m._correlation_id
    pm.subject = m._type
    pm.creation_time = m._timestamp / 1000.0
    pm.expiry_time = m._expiration / 1000.0
    if spec["ct"]:
        pm.content_type = spec["ct"]
    pm.annotations = {
        proton.symbol("x-opt-jms-msg-type"): proton.byte(spec["code"]),
        proton.symbol("x-opt-jms-dest"): proton.byte(0),
        proton.symbol("x-opt-jms-reply-to"): proton.byte(1),
    }
    pm.properties = {
        "customer": "ACME corp",
        "quantity": proton.int32(42),
        "price": 19.99,
        "express": True,
        "region": "EU",
    }
    if spec["code"] == 4:
        pm.inferred = True
    pm.body = spec["body"]
    return pm


def read_proton(pm: proton.Message) -> int:
    """Read every field of the decoded message (the JMS decode above reads them all too, into
    headers, JMSX/vendor properties and ``_extra``)."""
    n = 0
    for v in (
        pm.id, pm.creation_time, pm.correlation_id, pm.reply_to, pm.address, pm.durable, pm.delivery_count,
        pm.subject, pm.expiry_time, pm.ttl, pm.priority, pm.user_id, pm.content_type, pm.content_encoding,
        pm.group_id, pm.group_sequence, pm.reply_to_group_id, pm.first_acquirer, pm.instructions,
        pm.annotations, pm.body,
    ):  # fmt: skip
        n += v is not None
    for _k, v in pm.properties.items():
        n += v is not None
    return n


def theirs(specs: list[dict[str, Any]]) -> Callable[[], None]:
    def run() -> None:
        for spec in specs:
            data = build_proton(spec).encode()
            pm = proton.Message()
            pm.decode(data)
            read_proton(pm)

    return run


def timed(fn: Callable[[], None], reps: int) -> float:
    """CPU seconds of this thread for ``reps`` calls (CPU time, not wall time: the machine is
    shared, and being descheduled must not count against either side)."""
    gc.disable()
    t0 = time.thread_time()
    for _ in range(reps):
        fn()
    dt = time.thread_time() - t0
    gc.enable()
    return dt


def compare(
    ours_fn: Callable[[], None], theirs_fn: Callable[[], None], per_call: int, seconds: float
) -> tuple[float, float, float]:
    """(ours msg/s, proton msg/s, ratio): short batches of each back to back, the ratio is the
    median of the per-pair ratios and the rates the median rates."""
    ours_fn()
    theirs_fn()
    reps_ours = max(1, int(0.05 / max(timed(ours_fn, 1), 1e-6)))
    reps_theirs = max(1, int(0.05 / max(timed(theirs_fn, 1), 1e-6)))
    rates_ours, rates_theirs, ratios = [], [], []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(ratios) < 5:
        a = reps_ours * per_call / timed(ours_fn, reps_ours)
        b = reps_theirs * per_call / timed(theirs_fn, reps_theirs)
        rates_ours.append(a)
        rates_theirs.append(b)
        ratios.append(a / b)
    return statistics.median(rates_ours), statistics.median(rates_theirs), statistics.median(ratios)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a short run (< 60 s)")
    args = ap.parse_args()
    seconds = 10.0 if args.quick else 60.0

    msgs = jms_messages()
    ctx = MappingContext(now_ms=NOW)
    specs = proton_specs(msgs)
    sizes = [len(encode(m, context=ctx)) for m in msgs]
    best_ours, best_theirs, ratio = compare(ours(msgs, ctx), theirs(specs), len(msgs), seconds)
    print(f"messages: {[type(m).__name__ for m in msgs]}")
    print(f"encoded sizes (bytes): {sizes}")
    print(f"amqp_jms.mapping encode+decode+read: {best_ours:,.0f} msg/s (CPU time, median)")
    print(f"proton build+encode+decode+read:     {best_theirs:,.0f} msg/s")
    print(f"codec_bench: ratio {ratio:.2f} (goal {GOAL:g})")


if __name__ == "__main__":
    main()
