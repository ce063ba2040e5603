"""Selector speed: compiled closures vs hand-written predicates, and Arrow vs per-message.

Five representative selectors (string equality, numeric range, IN list, LIKE, a 6-term AND/OR
mix) run over 10^5 amqp_jms messages with ``Selector.matches`` and with a hand-written Python
predicate that computes the same thing on the same typed properties (goal: at least 0.5x its
speed); then ``Selector.evaluate_batch`` over a 10^6-row RecordBatch against the per-message path
(goal: at least 50x the rows per second).

Last two lines::

    selector_bench: vectorized ratio <y> (goal 50)
    selector_bench: ratio <x> (goal 0.5)

where x is the worst (smallest) per-selector ratio of the five and y the worst vectorized one.
The batch holds plain string columns (as Spark ships them); each line also shows, for
information, the batch with the low-cardinality ``color``/``region`` columns dictionary-encoded
(as Parquet readers deliver them), where string tests run once per distinct value.
The header line says whether the string tests ran on the optional C accelerator
(``amqp_jms.selector._strkernels``) or on the numpy path (``AMQP_JMS_NO_ACCEL=1``, or not built).
``--quick`` runs 2x10^4 messages / 2x10^5 rows (about 15 s). ``--kernels`` instead times, the
same way over the 10^6-row batch, the string kernels the vectorized path could be built on (Arrow's
``equal``/``is_in``/``starts_with``/..., the numpy pieces ``arrow_strings`` uses, and their
floors), which is where the figures in docs/benchmarks.md about them come from.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from amqp_jms.message import Message, TextMessage
from amqp_jms.selector import Selector
from amqp_jms.types import Int

COLORS = ["blue", "red", "green", "black", "white"]
REGIONS = ["EU", "US", "APAC", "LATAM", "MEA", "ANZ"]


def _color_eq(m: Any) -> bool:
    return m._props.get("color") == "blue"


def _range(m: Any) -> bool:
    w = m._props.get("weight")
    return isinstance(w, int) and not isinstance(w, bool) and 1000 <= w <= 2000


_REGION_SET = frozenset({"EU", "US", "APAC"})


def _in_list(m: Any) -> bool:
    r = m._props.get("region")
    return isinstance(r, str) and r in _REGION_SET


def _like(m: Any) -> bool:
    n = m._props.get("name")
    return isinstance(n, str) and n.startswith("ord-1")


def _mix(m: Any) -> bool:
    p = m._props
    c, w, pr, q = p.get("color"), p.get("weight"), p.get("price"), p.get("qty")
    return (
        (c == "blue" or c == "red")
        and isinstance(w, int) and w > 500
        and isinstance(pr, float) and pr < 50.0
        and ((isinstance(q, int) and q >= 10) or p.get("flag") is True)
    )


CASES: list[tuple[str, str, Callable[[Any], bool]]] = [
    ("string equality", "color = 'blue'", _color_eq),
    ("numeric range", "weight BETWEEN 1000 AND 2000", _range),
    ("IN list", "region IN ('EU', 'US', 'APAC')", _in_list),
    ("LIKE", "name LIKE 'ord-1%'", _like),
    ("6-term AND/OR", "(color = 'blue' OR color = 'red') AND weight > 500 AND price < 50.0 "
     "AND (qty >= 10 OR flag = TRUE)", _mix),
]


def make_messages(n: int, seed: int = 7) -> list[Message]:
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        m = TextMessage("x")
        p = m._props
        p["color"] = rnd.choice(COLORS)
        p["weight"] = rnd.randrange(0, 3000)
        p["region"] = rnd.choice(REGIONS)
        p["name"] = f"ord-{rnd.randrange(10**6)}"
        p["price"] = rnd.random() * 100.0
        p["qty"] = Int(rnd.randrange(0, 20))
        if i % 3:
            p["flag"] = rnd.random() < 0.5
        out.append(m)
    return out


def make_batch(rows: int, seed: int = 7) -> pa.RecordBatch:
    rng = np.random.default_rng(seed)
    flag = pa.array(rng.random(rows) < 0.5, mask=(np.arange(rows) % 3 == 0))
    ids = np.char.add("ord-", rng.integers(0, 10**6, rows).astype(str)).astype(object)
    names = pa.array(ids, pa.string())
    return pa.RecordBatch.from_pydict({
        "color": pa.array(np.array(COLORS, dtype=object)[rng.integers(0, len(COLORS), rows)], pa.string()),
        "weight": pa.array(rng.integers(0, 3000, rows), pa.int64()),
        "region": pa.array(np.array(REGIONS, dtype=object)[rng.integers(0, len(REGIONS), rows)], pa.string()),
        "name": names,
        "price": pa.array(rng.random(rows) * 100.0, pa.float64()),
        "qty": pa.array(rng.integers(0, 20, rows).astype(np.int32), pa.int32()),
        "flag": flag,
    })


def dictionary_encoded(batch: pa.RecordBatch, columns: tuple[str, ...]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pc.dictionary_encode(c) if n in columns else c for n, c in zip(batch.schema.names, batch.columns)],
        names=batch.schema.names,
    )


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


CHUNK = 1000  # messages per timed slice of the per-message runs


def per_message_time(rounds: int, fns: list[Callable[[Any], bool]], msgs: list[Message]) -> list[float]:
    """Seconds for each function over all ``msgs``: every 1000-message slice is timed ``rounds``
    times, interleaved between the functions, and its best time kept (a slice that was preempted
    on the shared machine is replaced by a clean run of the same slice)."""
    slices = [msgs[i : i + CHUNK] for i in range(0, len(msgs), CHUNK)]
    best = [[math.inf] * len(slices) for _ in fns]
    for _ in range(rounds):
        for j, part in enumerate(slices):
            for i, fn in enumerate(fns):
                t0 = time.perf_counter()
                sum(map(fn, part))
                best[i][j] = min(best[i][j], time.perf_counter() - t0)
    return [sum(b) for b in best]


ROW_SLICE = 100_000  # rows per timed slice of the vectorized runs


def vectorized_time(rounds: int, sel: Selector, batches: list[pa.RecordBatch]) -> list[float]:
    """Seconds for ``evaluate_batch`` over each batch, timed like the per-message runs: every
    100,000-row slice ``rounds`` times, interleaved, best kept per slice, summed."""
    out = []
    for batch in batches:
        slices = [batch.slice(i, ROW_SLICE) for i in range(0, batch.num_rows, ROW_SLICE)]
        best = [math.inf] * len(slices)
        for _ in range(rounds):
            for j, part in enumerate(slices):
                best[j] = min(best[j], timed(lambda: sel.evaluate_batch(part)))  # noqa: B023
        out.append(sum(best))
    return out


def kernels(rounds: int, batch: pa.RecordBatch) -> None:
    """ns per row of candidate string kernels, each alone, timed like ``vectorized_time``."""
    from amqp_jms.selector import arrow_strings
    from amqp_jms.selector.arrow_strings import Literals, _words4_at, hits, string_buffers

    slices = [batch.slice(i, ROW_SLICE) for i in range(0, batch.num_rows, ROW_SLICE)]
    regions = pa.array(["EU", "US", "APAC"])
    lookup = pc.SetLookupOptions(regions)
    blue, inl, prefix = (Literals([b"blue"], False), Literals([b"EU", b"US", b"APAC"], False),
                         Literals([b"ord-1"], True))

    def gather(a: Any) -> Any:  # the floor of the numpy path: the two gathers of 4 bytes per row
        sb = string_buffers(a)
        return _words4_at(sb.words.view(np.uint32), sb.starts - np.int32(sb.base))

    cases: list[tuple[str, str, Callable[[Any], object]]] = [
        ("color = 'blue'", "pc.equal", lambda a: pc.equal(a, "blue")),
        ("color = 'blue'", "numpy (arrow_strings.hits)", lambda a: hits(string_buffers(a), blue)),
        ("region IN (3)", "3 x pc.equal + pc.or_",
         lambda a: pc.or_(pc.or_(pc.equal(a, "EU"), pc.equal(a, "US")), pc.equal(a, "APAC"))),
        ("region IN (3)", "pc.is_in, prepared SetLookupOptions", lambda a: pc.is_in(a, options=lookup)),
        ("region IN (3)", "pc.index_in, prepared", lambda a: pc.index_in(a, options=lookup)),
        ("region IN (3)", "match_substring_regex ^(EU|US|APAC)$",
         lambda a: pc.match_substring_regex(a, "^(?:EU|US|APAC)$")),
        ("region IN (3)", "numpy (arrow_strings.hits)", lambda a: hits(string_buffers(a), inl)),
        ("region", "cast to string_view (alone)", lambda a: pc.cast(a, pa.string_view())),
        ("region", "cast to large_string (alone)", lambda a: pc.cast(a, pa.large_string())),
        ("region", "dictionary_encode (alone)", lambda a: pc.dictionary_encode(a)),
        ("region", "pc.binary_length (alone)", lambda a: pc.binary_length(a)),
        ("region", "numpy: 2 gathers of 4 bytes (floor)", gather),
        ("name LIKE 'ord-1%'", "pc.match_like", lambda a: pc.match_like(a, "ord-1%")),
        ("name LIKE 'ord-1%'", "pc.starts_with", lambda a: pc.starts_with(a, "ord-1")),
        ("name LIKE 'ord-1%'", "numpy (arrow_strings.hits)", lambda a: hits(string_buffers(a), prefix)),
    ]
    accel = arrow_strings._ACCEL
    if accel is not None:  # the C accelerator, as array_hits calls it

        def c_kernel(lits: Any) -> Callable[[Any], object]:
            def run(a: Any) -> object:
                out = np.empty(len(a), np.bool_)
                _, offsets, data = a.buffers()
                accel.match(offsets, data, a.offset, len(a), 4, lits.values, lits.prefix, out)
                return out
            return run

        cases += [
            ("color = 'blue'", "C accelerator (_strkernels.match)", c_kernel(blue)),
            ("region IN (3)", "C accelerator (_strkernels.match)", c_kernel(inl)),
            ("name LIKE 'ord-1%'", "C accelerator (_strkernels.match)", c_kernel(prefix)),
        ]
    for what, how, fn in cases:
        column = what.split()[0]
        best = [math.inf] * len(slices)
        for _ in range(rounds):
            for j, part in enumerate(slices):
                array = part.column(column)
                best[j] = min(best[j], timed(lambda: fn(array)))  # noqa: B023
        print(f"  {what:20s} {how:42s} {sum(best) * 1e9 / batch.num_rows:6.2f} ns/row")
    # the whole selectors: the plan (what evaluate_batch runs) against the pyarrow.compute walker
    # alone (what it ran before the plan existed), interleaved on the same slices
    from amqp_jms.selector.arrow import _Evaluator

    def walker(sel: Selector, part: pa.RecordBatch) -> object:
        result = _Evaluator(part).condition(sel.ast)
        return result if result.null_count == 0 else pc.and_kleene(result, pc.is_valid(result))

    for label, text, _ in CASES:
        sel = Selector(text)
        plan, walk = [math.inf] * len(slices), [math.inf] * len(slices)
        for _ in range(rounds):
            for j, part in enumerate(slices):
                walk[j] = min(walk[j], timed(lambda: walker(sel, part)))  # noqa: B023
                plan[j] = min(plan[j], timed(lambda: sel.evaluate_batch(part)))  # noqa: B023
        t_plan, t_walk = sum(plan) * 1e9 / batch.num_rows, sum(walk) * 1e9 / batch.num_rows
        print(f"  {label:20s} evaluate_batch {t_plan:6.2f} ns/row, pyarrow.compute walker alone "
              f"{t_walk:6.2f} ns/row: {t_walk / t_plan:4.2f}x faster")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2x10^4 messages, 2x10^5 rows")
    ap.add_argument("--kernels", action="store_true", help="time candidate string kernels alone")
    args = ap.parse_args()
    if args.kernels:
        kernels(5 if args.quick else 9, make_batch(2 * 10**5 if args.quick else 10**6))
        return
    n_msgs, n_rows, rounds = (2 * 10**4, 2 * 10**5, 5) if args.quick else (10**5, 10**6, 9)

    msgs = make_messages(n_msgs)
    batch = make_batch(n_rows)
    encoded = dictionary_encoded(batch, ("color", "region"))
    from amqp_jms.selector.arrow_strings import accelerated

    print(
        f"selector_bench: {n_msgs} messages per message (best of {rounds} per {CHUNK}-message slice), "
        f"{n_rows}-row RecordBatch vectorized (best of {rounds} per {ROW_SLICE}-row slice), string tests on "
        + ("the C accelerator" if accelerated() else "the numpy path (no C accelerator)")
    )
    ratios, vratios = [], []
    for label, text, predicate in CASES:
        sel = Selector(text)
        assert [sel.matches(m) for m in msgs] == [predicate(m) for m in msgs], label
        assert sel.evaluate_batch(batch).equals(sel.evaluate_batch(encoded)), label
        matches = sel.matches  # the generated function (compiled on first use)
        t_sel, t_hand = per_message_time(rounds, [matches, predicate], msgs)
        t_vec, t_enc = vectorized_time(rounds, sel, [batch, encoded])
        sel_rate, hand_rate = n_msgs / t_sel, n_msgs / t_hand
        vec_rate, enc_rate = n_rows / t_vec, n_rows / t_enc
        ratios.append(sel_rate / hand_rate)
        vratios.append(vec_rate / sel_rate)
        print(
            f"  {label:16s} matches {sel_rate / 1e6:5.2f} M/s, hand-written {hand_rate / 1e6:5.2f} M/s: "
            f"ratio {ratios[-1]:4.2f} | evaluate_batch {vec_rate / 1e6:6.1f} M rows/s: {vratios[-1]:6.1f}x "
            f"per-message (dictionary-encoded strings {enc_rate / 1e6:6.1f} M rows/s: "
            f"{enc_rate / sel_rate:6.1f}x)"
        )
    print(f"selector_bench: vectorized ratio {min(vratios):.1f} (goal 50)")
    print(f"selector_bench: ratio {min(ratios):.2f} (goal 0.5)")


if __name__ == "__main__":
    main()
