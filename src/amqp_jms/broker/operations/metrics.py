"""The broker's metrics: live counters, snapshots of them, and the Prometheus text they become.

Counting is an attribute increment where the thing happens, nothing more: each
:class:`~amqp_jms.broker.routing.queue.MessageQueue` carries a
:class:`~amqp_jms.broker.routing.counters.QueueCounters` (enqueued when a
message enters the queue, dequeued when it is consumed, expired, dead-lettered), each topic
counts what was published to it, and the core's
:class:`~amqp_jms.broker.routing.counters.BrokerCounters` counts connections and
failed logins. Gauges (depth, consumers, paged bytes, open connections, sessions, links) are not
kept at all: a snapshot reads them off the queues and connections when asked.

A snapshot is read on the broker's event loop, where those objects live, and is then plain data
any thread may use: :func:`snapshot` in one go (what ``Broker.metrics()``, the demo and the
management node read), :func:`snapshot_sliced` in slices of :data:`SLICE` queues with a yield to
the loop between them (what the HTTP endpoint uses, so that a scrape of a broker with many
queues never holds the loop for long; each queue's figures come from one instant, and with up to
``SLICE`` queues the whole snapshot does). Process figures (resident memory, the store's size on
disk) are file-system reads done by :func:`with_process_figures` in the caller's thread.
:func:`render` writes the text exposition format 0.0.4.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..._version import __version__
from ..protocol.connection import registered

if TYPE_CHECKING:
    from ..routing.core import BrokerCore
    from ..routing.queue import MessageQueue
    from ..storage.store import Store

__all__ = [
    "CONTENT_TYPE",
    "QUEUE_LABELS",
    "SLICE",
    "MetricsSnapshot",
    "QueueStats",
    "TopicStats",
    "escape_label",
    "hashed_label",
    "parse",
    "queue_stats",
    "render",
    "snapshot",
    "snapshot_sliced",
    "with_process_figures",
]

#: queues read per loop turn by :func:`snapshot_sliced` (7 ms at load 10 on the project's 2 cores)
SLICE = 500
#: the Content-Type of :func:`render`'s text
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
#: how :func:`render` names queues and topics (``--metrics-queue-labels``): ``names`` as they
#: are (Artemis's exporter; the default), ``hashed`` (a stable digest per name: per-queue series
#: and alerts keep working, the names are not shown), ``none`` (RabbitMQ's default
#: ``/metrics``: each queue and topic family is one unlabelled sum over all of them)
QUEUE_LABELS = ("names", "hashed", "none")


class QueueStats(NamedTuple):
    """One queue (or topic subscription) at one instant (a tuple: cheap to make by the
    thousand on the broker's loop)."""

    address: str  # the queue's address, or the topic a subscription is of
    queue: str  # the queue's own name (= address for a queue; ``sub:...`` for a subscription)
    kind: str  # "queue", "temporary-queue" or "subscription"
    depth: int  # waiting to be delivered: available now (in memory or paged) + scheduled
    delivering: int  # sent to a consumer, not yet settled
    consumers: int  # consumer links attached (browsers not counted)
    memory_bytes: int  # message bytes held in memory
    paged_bytes: int  # message bytes paged out to disk
    enqueued: int
    dequeued: int
    expired: int
    dead_lettered: int  # rejected + dead_lettered_attempts
    dead_lettered_attempts: int  # delivered max_delivery_attempts times without success
    removed: int  # purged or moved away by an operator ($management)


class TopicStats(NamedTuple):
    address: str
    published: int  # messages sent to the topic (each is copied to every matching subscription)
    subscriptions: int


@dataclass(frozen=True)
class MetricsSnapshot:
    """Everything :func:`render` exports, as taken at ``taken_at`` (``time.time()``)."""

    taken_at: float
    connections: int  # open now
    connections_total: int
    sessions: int
    links: int
    auth_failures_total: int
    #: one row per queue: :class:`QueueStats`'s fields as a plain tuple of strings and ints,
    #: which the garbage collector stops tracking (10^4 tracked objects a scrape would bring on
    #: full collections of the broker's heap, measured as pauses of 100+ ms of its event loop)
    rows: tuple[tuple[Any, ...], ...]
    topics: tuple[TopicStats, ...]
    store_size_bytes: int | None = None  # None: no store on disk (memory only)
    resident_memory_bytes: int | None = None  # None: not known on this platform

    @property
    def queues(self) -> tuple[QueueStats, ...]:
        """Every queue and subscription (a subscription's ``address`` is its topic)."""
        return tuple(map(QueueStats._make, self.rows))

    def queue(self, name: str) -> QueueStats | None:
        """The queue named ``name`` (a subscription's queue by its ``sub:...`` name)."""
        for row in self.rows:
            if row[1] == name:
                return QueueStats._make(row)
        return None

    def topic(self, address: str) -> TopicStats | None:
        for t in self.topics:
            if t.address == address:
                return t
        return None


# -- taking a snapshot (on the broker's event loop) ----------------------------------------------
class _Refs:
    """Every queue, then every subscription's queue, as they are now: parallel lists of
    addresses and queues (two containers, not a tuple per queue for the collector to track)."""

    def __init__(self, core: BrokerCore) -> None:
        router = core.router
        self.kinds = router.kinds  # NodeKind is a str: "queue" or "temporary-queue"
        self.addresses: list[str] = list(router.queues)
        self.queues: list[MessageQueue] = list(router.queues.values())
        self.n_queues = len(self.queues)
        for address, topic in router.topics.items():
            for sub in topic.subscriptions:
                self.addresses.append(address)
                self.queues.append(sub.queue)

    def __len__(self) -> int:
        return len(self.queues)

    def rows(self, start: int, stop: int) -> list[tuple[Any, ...]]:
        addresses, queues, kinds, n = self.addresses, self.queues, self.kinds, self.n_queues
        return [
            _queue_stats(addresses[i], kinds.get(addresses[i], "queue") if i < n else "subscription",
                         queues[i])
            for i in range(start, min(stop, len(queues)))
        ]


def _queue_stats(address: str, kind: str, q: MessageQueue) -> tuple[Any, ...]:
    """A :class:`QueueStats` row as a plain tuple (see ``MetricsSnapshot.rows``)."""
    c = q.counters
    consumers = q.consumers
    delivering = sum(len(getattr(x, "unacked", ())) for x in consumers) if consumers else 0
    return (
        address, q.name, kind, len(q) + q.delayed, delivering, len(consumers),
        q.byte_size, q.paged_bytes, c.enqueued, c.dequeued, c.expired, c.dead_lettered,
        c.dead_lettered_attempts, c.removed,
    )


def _head(core: BrokerCore) -> tuple[int, int, int, int, int, tuple[TopicStats, ...]]:
    conns = list(registered(core).values())
    topics = tuple(TopicStats(a, t.published, len(t.subscriptions)) for a, t in core.router.topics.items())
    counters = core.counters
    return (len(conns), counters.connections, sum(c.sessions for c in conns),
            sum(len(c.links) for c in conns), counters.auth_failures, topics)


def snapshot(core: BrokerCore) -> MetricsSnapshot:
    """Every figure at this instant; call on the broker's loop (``Broker.metrics()`` does)."""
    head = _head(core)
    refs = _Refs(core)
    queues = tuple(refs.rows(0, len(refs)))
    return MetricsSnapshot(time.time(), *head[:5], queues, head[5])


def queue_stats(core: BrokerCore, name: str) -> QueueStats | None:
    """One queue's figures now, by its name (a subscription's by its ``sub:...`` name), without
    a snapshot of all of them; None if there is no such queue. Call on the broker's loop."""
    router = core.router
    q = router.queues.get(name)
    if q is not None:
        return QueueStats._make(_queue_stats(name, router.kinds.get(name, "queue"), q))
    for address, topic in router.topics.items():
        for sub in topic.subscriptions:
            if sub.queue.name == name:
                return QueueStats._make(_queue_stats(address, "subscription", sub.queue))
    return None


async def snapshot_sliced(core: BrokerCore, slice_: int | None = None) -> MetricsSnapshot:
    """:func:`snapshot` read ``slice_`` (default :data:`SLICE`) queues per loop turn (runs on
    the broker's loop)."""
    slice_ = slice_ or SLICE
    head = _head(core)
    taken = time.time()
    refs = _Refs(core)
    out: list[tuple[Any, ...]] = []
    for i in range(0, len(refs), slice_):
        if i:
            await asyncio.sleep(0)  # let the connections run between slices
        out.extend(refs.rows(i, i + slice_))
    return MetricsSnapshot(taken, *head[:5], tuple(out), head[5])


# -- process figures (any thread) ----------------------------------------------------------------
def resident_memory_bytes() -> int | None:
    """This process's resident set size (Linux ``/proc/self/statm``); None elsewhere."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def store_size_bytes(store: Store | None) -> int | None:
    """Bytes the durable store takes on disk (database, its write-ahead log, large-message
    files); None for the in-memory store."""
    path = getattr(store, "path", None)
    if store is None or not store.persistent or not isinstance(path, Path):
        return None
    total = 0
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        try:
            total += p.stat().st_size
        except OSError:
            pass
    try:
        with os.scandir(path.parent / "large") as entries:
            for e in entries:
                try:
                    total += e.stat().st_size
                except OSError:
                    pass
    except OSError:
        pass
    return total


def with_process_figures(snap: MetricsSnapshot, store: Store | None) -> MetricsSnapshot:
    """``snap`` with the process's resident memory and the store's size filled in."""
    return dataclasses.replace(
        snap, store_size_bytes=store_size_bytes(store), resident_memory_bytes=resident_memory_bytes()
    )


# -- the Prometheus text exposition format 0.0.4 ---------------------------------------------------
PREFIX = "amqp_jms_broker_"

#: (name without prefix, type, help, QueueStats field)
_QUEUE_METRICS = (
    ("queue_depth", "gauge", "Messages waiting to be delivered (available, paged or scheduled).", "depth"),
    ("queue_delivering", "gauge", "Messages sent to consumers and not yet settled.", "delivering"),
    ("queue_consumers", "gauge", "Consumer links attached to the queue (browsers not counted).", "consumers"),
    ("queue_memory_bytes", "gauge", "Bytes of the queue's messages held in memory.", "memory_bytes"),
    ("queue_paged_bytes", "gauge", "Bytes of the queue's messages paged out to disk.", "paged_bytes"),
    ("queue_enqueued_total", "counter", "Messages that entered the queue.", "enqueued"),
    ("queue_dequeued_total", "counter", "Messages consumed from the queue (accepted or presettled).",
     "dequeued"),
    ("queue_expired_total", "counter", "Messages dropped from the queue on expiry.", "expired"),
    ("queue_removed_total", "counter",
     "Messages an operator purged from the queue or moved away from it ($management).", "removed"),
)
_DEAD = ("queue_dead_lettered_total", "counter",
         "Messages moved from the queue to the dead-letter queue, by reason: rejected by a consumer, "
         "or delivery_limit (max_delivery_attempts failed deliveries).")


_FIELD = {name: i for i, name in enumerate(QueueStats._fields)}


def escape_label(value: str) -> str:
    """A label value as the text format wants it: backslash, double quote and newline escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _help(name: str, kind: str, text: str) -> Iterator[str]:
    yield f"# HELP {PREFIX}{name} {text}\n"
    yield f"# TYPE {PREFIX}{name} {kind}\n"


def hashed_label(name: str) -> str:
    """The label value ``hashed`` mode shows for ``name``: ``h-`` and the first 16 hex digits of
    its SHA-256, the same on every scrape and restart (a dashboard's series stay one series)."""
    return "h-" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _label(value: str, mode: str) -> str:
    return escape_label(value) if mode == "names" else hashed_label(value)


def _lines(snap: MetricsSnapshot, queue_labels: str) -> Iterator[str]:
    yield from _help("info", "gauge", "The broker's version (the value is always 1).")
    yield f'{PREFIX}info{{version="{escape_label(__version__)}"}} 1\n'
    scalars: list[tuple[str, str, str, int | None]] = [
        ("connections", "gauge", "AMQP connections open now.", snap.connections),
        ("connections_total", "counter", "Connections accepted since the broker started.",
         snap.connections_total),
        ("sessions", "gauge", "Sessions open now, all connections.", snap.sessions),
        ("links", "gauge", "Links attached now, all connections.", snap.links),
        ("auth_failures_total", "counter", "Failed logins (SASL authentication failures).",
         snap.auth_failures_total),
        ("store_size_bytes", "gauge", "Bytes the durable store takes on disk.", snap.store_size_bytes),
        ("process_resident_memory_bytes", "gauge", "Resident memory of the broker's process.",
         snap.resident_memory_bytes),
    ]
    for name, kind, text, value in scalars:
        if value is not None:
            yield from _help(name, kind, text)
            yield f"{PREFIX}{name} {value}\n"
    if queue_labels == "none":
        yield from _summed(snap)
        return
    rows = snap.rows
    labels = [f'address="{_label(r[0], queue_labels)}",queue="{_label(r[1], queue_labels)}"' for r in rows]
    for name, kind, text, field in _QUEUE_METRICS:
        yield from _help(name, kind, text)
        i, head = _FIELD[field], f"{PREFIX}{name}{{"
        yield "".join([f"{head}{lab}}} {r[i]}\n" for lab, r in zip(labels, rows)])
    yield from _help(*_DEAD)
    dead, attempts, head = _FIELD["dead_lettered"], _FIELD["dead_lettered_attempts"], f"{PREFIX}{_DEAD[0]}{{"
    yield "".join([f'{head}{lab},reason="rejected"}} {r[dead] - r[attempts]}\n'
                   f'{head}{lab},reason="delivery_limit"}} {r[attempts]}\n'
                   for lab, r in zip(labels, rows)])
    topic_labels = [f'address="{_label(t.address, queue_labels)}"' for t in snap.topics]
    yield from _help("topic_published_total", "counter", "Messages sent to the topic.")
    for lab, t in zip(topic_labels, snap.topics):
        yield f"{PREFIX}topic_published_total{{{lab}}} {t.published}\n"
    yield from _help("topic_subscriptions", "gauge", "Subscriptions of the topic.")
    for lab, t in zip(topic_labels, snap.topics):
        yield f"{PREFIX}topic_subscriptions{{{lab}}} {t.subscriptions}\n"


def _summed(snap: MetricsSnapshot) -> Iterator[str]:
    """``none`` mode: each per-queue and per-topic family as one sample, summed over all of them
    (RabbitMQ's aggregated ``/metrics``); no name appears."""
    rows = snap.rows
    for name, kind, text, field in _QUEUE_METRICS:
        yield from _help(name, kind, text.replace("the queue", "all queues"))
        i = _FIELD[field]
        yield f"{PREFIX}{name} {sum(r[i] for r in rows)}\n"
    yield from _help(*_DEAD)
    dead = sum(r[_FIELD["dead_lettered"]] for r in rows)
    attempts = sum(r[_FIELD["dead_lettered_attempts"]] for r in rows)
    yield f'{PREFIX}{_DEAD[0]}{{reason="rejected"}} {dead - attempts}\n'
    yield f'{PREFIX}{_DEAD[0]}{{reason="delivery_limit"}} {attempts}\n'
    yield from _help("topic_published_total", "counter", "Messages sent to all topics.")
    yield f"{PREFIX}topic_published_total {sum(t.published for t in snap.topics)}\n"
    yield from _help("topic_subscriptions", "gauge", "Subscriptions of all topics.")
    yield f"{PREFIX}topic_subscriptions {sum(t.subscriptions for t in snap.topics)}\n"


def render(snap: MetricsSnapshot, queue_labels: str = "names") -> str:
    """The snapshot in the Prometheus text exposition format 0.0.4 (``CONTENT_TYPE``), queues
    and topics named as ``queue_labels`` says (:data:`QUEUE_LABELS`)."""
    if queue_labels not in QUEUE_LABELS:
        raise ValueError(f"queue_labels must be one of {', '.join(QUEUE_LABELS)}, not {queue_labels!r}")
    return "".join(_lines(snap, queue_labels))


def parse(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Samples of a text exposition by (name, sorted labels): for tests and the demo's report.

    Reads what :func:`render` writes (label values with ``\\\\``, ``\\"`` and ``\\n`` escapes),
    not every corner of the format (no timestamps)."""
    out: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        brace = line.find("{")
        if brace < 0:
            name, value = line.split(" ", 1)
            out[(name, ())] = float(value)
            continue
        name, labels, i = line[:brace], [], brace + 1
        while line[i] != "}":
            eq = line.index("=", i)
            key, i, chars = line[i:eq], eq + 2, []
            while line[i] != '"':
                if line[i] == "\\":
                    i += 1
                    chars.append("\n" if line[i] == "n" else line[i])
                else:
                    chars.append(line[i])
                i += 1
            labels.append((key, "".join(chars)))
            i += 1
            if line[i] == ",":
                i += 1
        out[(name, tuple(sorted(labels)))] = float(line[i + 1:].strip())
    return out
