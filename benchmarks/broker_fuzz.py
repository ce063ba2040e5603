"""Fuzz the embedded broker with mutated AMQP frames; report crashes, hangs, tracebacks, peak RSS.

The broker runs as a subprocess with its defaults (``python -m amqp_jms.broker``). Each case
opens a connection and sends a valid prefix of a session (SASL, then open, begin, attach of a
sender and a receiver, flow, transfer, disposition, detach, end, close) followed by a tail whose
frames are mutated (bit flips, interesting bytes, truncation, a corrupted size, constructor swaps
for type confusion, inserted junk). Many workers run cases at once; every ``--probe-every`` cases
an innocent client does a round trip, which must finish within ``--hang`` seconds.

    .venv/bin/python benchmarks/broker_fuzz.py [--quick] [--frames N] [--seed S]

Reported: mutated frames sent, cases, crashes (the broker process died), hangs (a probe over
the limit), tracebacks and ERROR lines in the broker's log, the slowest probe and peak RSS
(VmHWM). Last line: ``broker_fuzz: ratio <failures> (goal 0)``; exit status 1 on any failure.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import socket
import sys
import threading
import time
from typing import Any

from proton import Message
from proton.utils import BlockingConnection

from amqp_jms.mapping.codec import encode_value
from amqp_jms.testing.broker_process import BrokerProcess
from amqp_jms.types import Described, Symbol, UByte, UInt, ULong

AMQP_HEADER = b"AMQP\x00\x01\x00\x00"
SASL_HEADER = b"AMQP\x03\x01\x00\x00"
OPEN, BEGIN, ATTACH, FLOW, TRANSFER, DISPOSITION, DETACH, END, CLOSE = range(0x10, 0x19)
SASL_INIT = 0x41
INTERESTING = [0x00, 0x01, 0x40, 0x45, 0x7F, 0x80, 0xA0, 0xA1, 0xA3, 0xB0, 0xC0, 0xD0, 0xE0, 0xF0, 0xFF]


def frame(
    performative: int, fields: list[Any], channel: int = 0, payload: bytes = b"", kind: int = 0
) -> bytes:
    body = encode_value(Described(ULong(performative), fields)) + payload
    return (len(body) + 8).to_bytes(4, "big") + bytes([2, kind]) + channel.to_bytes(2, "big") + body


def session(rng: random.Random) -> list[bytes]:
    """A valid conversation, one frame per item (headers are items too)."""
    msg = Message(body="fuzz " * rng.randint(1, 20), properties={"k": rng.randint(0, 9), "s": "v"},
                  durable=rng.random() < 0.5, priority=rng.randint(0, 9)).encode()
    src = Described(ULong(0x28), ["fuzz-q"])
    tgt = Described(ULong(0x29), ["fuzz-q"])
    return [
        SASL_HEADER,
        frame(SASL_INIT, [Symbol("ANONYMOUS"), b""], kind=1),
        AMQP_HEADER,
        frame(OPEN, ["fuzzer", None, UInt(65536), UInt(8)]),
        frame(BEGIN, [None, UInt(0), UInt(1000), UInt(1000)]),
        frame(ATTACH, ["snd", UInt(0), False, UByte(0), UByte(0), Described(ULong(0x28), []), tgt]),
        frame(ATTACH, ["rcv", UInt(1), True, UByte(0), UByte(0), src, Described(ULong(0x29), [])]),
        frame(FLOW, [UInt(0), UInt(1000), UInt(0), UInt(1000), UInt(1), UInt(0), UInt(10)]),
        frame(TRANSFER, [UInt(0), UInt(0), b"t0", UInt(0), False, False], payload=msg),
        frame(DISPOSITION, [True, UInt(0), UInt(0), True, Described(ULong(0x24), [])]),
        frame(DETACH, [UInt(0), True]),
        frame(DETACH, [UInt(1), True]),
        frame(END, []),
        frame(CLOSE, []),
    ]


def mutate(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    how = rng.randrange(8)
    if how == 0 and b:  # bit flips
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
    elif how == 1 and b:  # interesting bytes
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(len(b))] = rng.choice(INTERESTING)
    elif how == 2 and len(b) > 1:  # truncation
        del b[rng.randrange(1, len(b)):]
    elif how == 3 and len(b) >= 4:  # size field
        b[0:4] = rng.choice([0, 7, 8, 0xFFFFFFFF, 0x7FFFFFFF, len(b) + rng.randint(1, 1 << 20),
                             max(8, len(b) - rng.randint(1, 8))]).to_bytes(4, "big")
    elif how == 4 and len(b) > 9:  # constructor swap after the frame header (type confusion)
        positions = [i for i in range(8, len(b)) if b[i] in INTERESTING] or [8]
        b[rng.choice(positions)] = rng.choice(INTERESTING)
    elif how == 5:  # junk inserted
        i = rng.randrange(len(b) + 1)
        b[i:i] = rng.randbytes(rng.randint(1, 32))
    elif how == 6 and len(b) > 9:  # a length prefix of a variable value inflated
        i = rng.randrange(8, len(b))
        b[i] = 0xFF
    else:  # the frame repeated (duplicate ids, handles, channels)
        b += data
    return bytes(b)


#: the fuzzer connects from here and the innocent probe from 127.0.0.1, as an attacker and a user
#: are different hosts: the broker's login throttle locks out an address after failed logins
#: (mutated SASL frames count), and must lock out the attacker, not the user
ATTACKER_SOURCE = ("127.0.0.2", 0)


def run_case(addr: tuple[str, int], rng: random.Random) -> int:
    """One connection: a valid prefix, then 1-3 mutated tail frames. Returns frames mutated."""
    seq = session(rng)
    k = rng.randrange(len(seq))
    tail = seq[k:]
    n = min(len(tail), rng.randint(1, 3))
    mutated = [mutate(f, rng) for f in tail[:n]] + tail[n:]
    try:
        with socket.create_connection(addr, timeout=2, source_address=ATTACKER_SOURCE) as s:
            s.sendall(b"".join(seq[:k]) + b"".join(mutated))
            s.settimeout(0.02)
            try:
                while s.recv(65536):
                    pass
            except (TimeoutError, OSError):
                pass
    except OSError:
        pass
    return n


def probe(url: str) -> float:
    t0 = time.monotonic()
    c = BlockingConnection(url, timeout=30)
    try:
        c.create_sender("fuzz-probe").send(Message(body="probe"))
        r = c.create_receiver("fuzz-probe")
        r.receive(timeout=30)
        r.accept()
    finally:
        c.close()
    return time.monotonic() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a short run for CI (~3,000 frames)")
    ap.add_argument("--frames", type=int, default=None, help="mutated frames to send (default 100,000)")
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--probe-every", type=int, default=2000, help="cases between innocent round trips")
    ap.add_argument("--hang", type=float, default=2.0, help="seconds a probe may take")
    args = ap.parse_args()
    target = args.frames or (3000 if args.quick else 100_000)
    broker = BrokerProcess(quiet=False)  # INFO log: every ERROR and traceback is counted
    sent = cases = hangs = 0
    slowest = 0.0
    lock = threading.Lock()
    stop = threading.Event()
    t0 = time.monotonic()

    def worker(seed: int) -> None:
        nonlocal sent, cases
        rng = random.Random(seed)
        while not stop.is_set():
            n = run_case(broker.addr, rng)
            with lock:
                sent += n
                cases += 1
                if sent >= target:
                    stop.set()

    threads = [threading.Thread(target=worker, args=(args.seed * 1000 + i,), daemon=True)
               for i in range(args.workers)]
    for t in threads:
        t.start()
    next_probe = args.probe_every
    try:
        while not stop.is_set():
            time.sleep(0.2)
            if broker.proc.poll() is not None:
                stop.set()
                break
            if cases >= next_probe:
                next_probe += args.probe_every
                try:
                    took = probe(broker.url)
                except Exception:
                    took = float("inf")
                slowest = max(slowest, took)
                if took > args.hang:
                    hangs += 1
                    print(f"hang: an innocent round trip took {took:.2f}s after {cases} cases", flush=True)
        for t in threads:
            t.join(10)
        crashed = broker.proc.poll() is not None
        if not crashed:
            slowest = max(slowest, probe(broker.url))
        peak = broker.peak_mb()
    finally:
        log = broker.stop()
    tracebacks = log.count("Traceback")
    errors = len(re.findall(r" ERROR ", log))
    elapsed = time.monotonic() - t0
    print(f"mutated frames: {sent} in {cases} connections, {elapsed:.0f} s ({sent / elapsed:.0f} frames/s)")
    print(f"crashes: {int(crashed)}  hangs: {hangs}  tracebacks: {tracebacks}  ERROR lines: {errors}")
    print(f"slowest innocent round trip: {slowest:.3f} s  peak RSS (VmHWM): {peak:.0f} MB")
    if tracebacks or errors:
        first = log[log.find("ERROR") if "ERROR" in log else log.find("Traceback"):][:1500]
        print("first error in the broker's log:\n" + first)
    failures = int(crashed) + hangs + tracebacks + errors
    print(f"broker_fuzz: ratio {failures} (goal 0)")
    return 1 if failures else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
