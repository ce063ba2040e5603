"""Crash points for the connector's crash tests (a test seam; inert unless the variable is set).

The crash tests run a streaming query in a subprocess with ``AMQP_JMS_SPARK_CRASH_AT=<point>``
(and optionally ``AMQP_JMS_SPARK_CRASH_AFTER=<n>``: pass the point ``n`` times first). When the
point is reached, the process writes ``AMQP_JMS_SPARK_CRASH_MARKER`` and blocks, and the test
SIGKILLs the whole driver process group: a real crash at exactly that point, not an exception
Spark could handle. Points: ``mid_segment`` (the background receiver holds received messages
not yet appended or accepted; passed once per message), ``after_append`` (segment durable,
messages not yet accepted),
``after_accept`` (accepted, batch not yet planned or committed), ``during_sink`` (an executor is
part-way through a batch).

``AMQP_JMS_SPARK_CRASH_ARMED_BY=<path>`` counts passes only once that file exists (the tests
name the checkpoint's first commit): the receiver runs ahead of Spark, so without it a crash
"on the third pass" can land before Spark has written its first batch's offsets, which is not
the point under test (and Spark itself cannot restart a query killed while writing them).
"""

from __future__ import annotations

import os
import time

__all__ = ["crash_point"]

_passes: dict[str, int] = {}


def crash_point(name: str) -> None:
    if os.environ.get("AMQP_JMS_SPARK_CRASH_AT") != name:
        return
    armed_by = os.environ.get("AMQP_JMS_SPARK_CRASH_ARMED_BY")
    if armed_by and not os.path.exists(armed_by):
        return
    seen = _passes.get(name, 0)
    _passes[name] = seen + 1
    if seen < int(os.environ.get("AMQP_JMS_SPARK_CRASH_AFTER", "0")):
        return
    marker = os.environ.get("AMQP_JMS_SPARK_CRASH_MARKER")
    if marker:
        with open(marker, "w") as handle:
            handle.write(f"{name} {os.getpid()}\n")
    while True:  # wait for SIGKILL
        time.sleep(1)
