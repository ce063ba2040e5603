"""client_bench --observability: what issue 21's hooks cost (tracing off vs the release, and on).

Three amqp-jms figures (256-byte messages; the same work as client_bench's first three phases):
presettled send, AUTO_ACKNOWLEDGE receive with prefetch 1000, synchronous persistent send. Each
runs in a fresh process against the same broker, in three variants whose rounds alternate:

* ``release``: the client as of ``--release`` (a git ref, default ``main``), exported with
  ``git archive`` into a temporary directory and put first on ``PYTHONPATH``;
* ``off``: this tree, default options (no frame trace, no tracing: the counters still count);
* ``tracing``: this tree with ``jms.tracing=opentelemetry&jms.metrics=opentelemetry`` and the
  OpenTelemetry SDK set up as an application would (a ``TracerProvider`` with a
  ``BatchSpanProcessor`` to an exporter that drops the spans: the SDK's cost, not an exporter's).

Two figures per run: the rate (messages/s, wall clock) and the client process's CPU time per
message (user + system, every thread of it: the I/O thread included). On a shared, loaded
machine the rate mostly measures the scheduler, so the goal is on the CPU: the best (least CPU)
of the rounds per variant, ``release CPU / off CPU >= 0.95`` on each figure (off costs at most
about 5 % more than the release: within noise). The tracing figures are recorded, with no goal.
Last line: ``client_bench observability: ratio <min release/off CPU> (goal 0.95)``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

GOAL = 0.95
VARIANTS = ("release", "off", "tracing")
FIGURES = ("presettled send", "receive (ack)", "sync persistent send")
_OPTIONS = {"release": "", "off": "", "tracing": "jms.tracing=opentelemetry&jms.metrics=opentelemetry"}
_HERE = Path(__file__).resolve().parent
_REPO = _HERE.parent


def _setup_otel() -> None:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class Drop(SpanExporter):
        def export(self, spans: object) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Drop()))
    trace.set_tracer_provider(provider)


def worker(figure: str, url: str, address: str, n: int, variant: str) -> tuple[float, float]:
    """One figure in this process (its amqp_jms is whatever PYTHONPATH gave it), with client_bench's
    own functions: (messages/s, CPU microseconds per message)."""
    import time

    from client_bench import jms_receive, jms_send_presettled, jms_send_sync

    # imported before the clock starts: an import is not a per-message cost
    import amqp_jms.mapping.inbound
    import amqp_jms.mapping.outbound
    import amqp_jms.provider.amqp.connection

    if variant == "tracing":
        _setup_otel()
        import amqp_jms.provider.tracing  # noqa: F401
    extra = "&" + _OPTIONS[variant] if _OPTIONS[variant] else ""
    cpu0 = time.process_time()
    if figure == "receive (ack)":
        rate = jms_receive(url, address, n, "?jms.prefetchPolicy.all=1000" + extra)
    elif figure == "presettled send":
        rate = jms_send_presettled(url, address, n, extra)
    else:
        rate = jms_send_sync(url, address, n, extra)
    return rate, (time.process_time() - cpu0) / n * 1e6


def _export_release(ref: str, into: str) -> str:
    """``src/`` of ``ref`` in ``into`` (git archive: the release's sources only)."""
    archive = subprocess.run(["git", "-C", str(_REPO), "archive", ref, "src"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", into], input=archive, check=True)
    return os.path.join(into, "src")


def _run(src: str, figure: str, url: str, address: str, n: int, variant: str) -> tuple[float, float]:
    env = dict(os.environ, PYTHONPATH=src)
    out = subprocess.run(
        [sys.executable, str(Path(__file__)), "--worker", figure, url, address, str(n), variant],
        env=env, capture_output=True, text=True, check=False, timeout=600,
    )
    if out.returncode != 0:
        raise RuntimeError(f"{variant} {figure} failed:\n{out.stderr[-2000:]}")
    rate, cpu = out.stdout.strip().splitlines()[-1].split()
    return float(rate), float(cpu)


def counting_ns() -> float:
    """Nanoseconds the per-message counting of a received message costs (the I/O thread's two
    increments; a send's are the same two), measured on this tree's ``Counters``."""
    import timeit

    from amqp_jms.provider.metrics import Counters

    number = 2_000_000
    t = timeit.timeit("c = k; c.messages_received += 1; c.bytes_received += 256",
                      setup="k = Counters('x')", globals={"Counters": Counters}, number=number)
    empty = timeit.timeit("c = k", setup="k = Counters('x')", globals={"Counters": Counters}, number=number)
    return (t - empty) / number * 1e9


def run(url: str, n: int, n_sync: int, rounds: int, release: str, fill: object, drain: object) -> int:
    """The comparison (called by client_bench with its broker and its fill/drain helpers)."""
    this_src = str(_REPO / "src")
    with tempfile.TemporaryDirectory(prefix="amqp-jms-release-") as tmp:
        srcs = {"release": _export_release(release, tmp), "off": this_src, "tracing": this_src}
        best: dict[str, dict[str, float]] = {f: {} for f in FIGURES}
        cpu: dict[str, dict[str, float]] = {f: {} for f in FIGURES}
        for r in range(rounds):
            for figure in FIGURES:
                count = n_sync if figure == "sync persistent send" else n
                for variant in VARIANTS:
                    address = f"obs-{variant}-{r}-{figure[:4]}"
                    if figure == "receive (ack)":
                        fill(url, address, count)  # type: ignore[operator]
                    rate, us = _run(srcs[variant], figure, url, address, count, variant)
                    if figure != "receive (ack)":
                        drain(url, address)  # type: ignore[operator]
                    best[figure][variant] = max(best[figure].get(variant, 0.0), rate)
                    cpu[figure][variant] = min(cpu[figure].get(variant, float("inf")), us)
                    print(f"round {r + 1} {figure:22s} {variant:8s} {rate:10.0f} msg/s {us:8.1f} us CPU/msg",
                          flush=True)
    print()
    print("msg/s (best of the rounds)")
    print(f"{'figure':24s} {'release':>9s} {'off':>9s} {'tracing':>9s} {'off/rel':>8s} {'tracing/off':>12s}")
    for figure, b in best.items():
        print(f"{figure:24s} {b['release']:9.0f} {b['off']:9.0f} {b['tracing']:9.0f} "
              f"{b['off'] / b['release']:8.2f} {b['tracing'] / b['off']:12.2f}")
    print("client CPU us per message (least of the rounds)")
    print(f"{'figure':24s} {'release':>9s} {'off':>9s} {'tracing':>9s} {'rel/off':>8s} {'tracing/off':>12s}")
    ratios = []
    for figure, c in cpu.items():
        ratio = c["release"] / c["off"]
        ratios.append(ratio)
        print(f"{figure:24s} {c['release']:9.1f} {c['off']:9.1f} {c['tracing']:9.1f} {ratio:8.2f} "
              f"{c['tracing'] / c['off']:12.2f}")
    print(f"counting per received message: {counting_ns():.0f} ns (two int increments on the I/O thread)")
    print(f"client_bench observability: ratio {min(ratios):.2f} (goal {GOAL})")
    return 0


if __name__ == "__main__" and len(sys.argv) == 7 and sys.argv[1] == "--worker":
    print(*worker(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6]))
