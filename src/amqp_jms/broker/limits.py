"""Every length, count, depth, size and wait a peer controls, with the broker's safe defaults.

One frozen value object, :class:`BrokerLimits`, reached from the broker as ``limits``. Each field
names what it bounds, the default is what a broker started with no options uses, and a value of
``0`` means "no limit" only where the field's comment says so. ``docs/broker.md`` lists each limit
with what a client sees when it is hit.

The configuration file's ``[limits]`` table maps onto these fields by name (``from_mapping``), and
the command-line flags override single fields (``replace``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

__all__ = ["DEFAULT_IDLE_TIMEOUT", "AddressFullPolicy", "BrokerLimits", "LimitError", "MiB"]

MiB = 1024 * 1024

DEFAULT_IDLE_TIMEOUT = 60.0
"""Seconds of silence after which the broker closes a connection, advertised in Open (half of
it, per AMQP 1.0 2.4.5) when none is configured: RabbitMQ's heartbeat and Artemis's
connection-ttl are 60 s too. ``idle_timeout_s=0`` (``--idle-timeout 0``) turns it off."""


class AddressFullPolicy(Enum):
    """What a queue does when its memory limit is reached (Artemis's ``address-full-policy``).

    ``PAGE``: keep accepting; messages beyond the limit are paged to disk, producers are
    flow-controlled only when the broker-wide ``max_memory`` / ``max_store_size`` is reached.
    ``BLOCK``: stop granting producers credit until consumers make room.
    ``FAIL``: reject sends to the full queue with ``amqp:resource-limit-exceeded``.
    """

    PAGE = "PAGE"
    BLOCK = "BLOCK"
    FAIL = "FAIL"


class LimitError(ValueError):
    """A bad ``[limits]`` entry; ``key`` names it (None when no one key is to blame)."""

    def __init__(self, key: str | None, message: str) -> None:
        super().__init__(message)
        self.key = key

@dataclass(frozen=True, slots=True)
class BrokerLimits:
    """The broker's limits; every default is safe for a broker facing the open network."""

    # -- frames and the handshake ---------------------------------------------------------------
    max_frame_size: int = 65536
    """Largest AMQP frame accepted (advertised in Open; a bigger frame closes with framing-error)."""
    handshake_timeout: float = 10.0
    """Seconds a new connection has to finish SASL and Open before it is closed (0 = never)."""
    max_sasl_frame_size: int = 65536
    """Largest SASL frame accepted before login."""
    max_websocket_frame_size: int = 1 * MiB
    """Largest WebSocket frame accepted on the WebSocket listener (a bigger one: close code 1009)."""

    # -- connections, sessions, links -----------------------------------------------------------
    max_connections: int = 4096
    """Open connections at once, all users together (0 = no limit)."""
    max_connections_per_user: int = 1024
    """Open connections at once per authenticated user (anonymous counts as one user; 0 = no limit)."""
    max_connections_per_address: int = 512
    """Open connections at once from one source address (0 = no limit); more are closed at accept,
    before any byte is read, as ``max_connections``."""
    frame_timeout: float = 30.0
    """Seconds a frame may take to arrive in full once the previous one did, while its bytes are
    coming (0 = no limit): a peer trickling a frame a byte at a time (which the idle timeout
    cannot see: bytes are arriving) is closed with ``amqp:resource-limit-exceeded``."""
    max_sessions_per_connection: int = 256
    """Sessions a connection may have open (the channel-max advertised is one less)."""
    max_links_per_connection: int = 4096
    """Links (producers + consumers) a connection may have attached at once."""

    max_nodes: int = 10000
    """Queues, topics and named (durable or shared) subscriptions the broker holds; attaching to a
    new address beyond it is refused (0 = no limit)."""

    max_transactions_per_connection: int = 1024
    """Transactions a connection may have declared and not yet discharged; a declare beyond it is
    rejected (0 = no limit). A JMS client holds one per transacted session."""
    max_txn_outcomes: int = 10000
    """Committed transactions whose outcome the broker keeps (in the store, with the commit) so a
    client whose Discharge lost its answer can ask after reconnecting; the oldest beyond it are
    forgotten, and asking about one then answers ``amqp:transaction:unknown-id`` (0 = keep none,
    and the coordinator does not offer ``amqp-jms:txn-outcomes``)."""
    txn_outcome_seconds: float = 3600.0
    """How long a committed transaction's outcome is kept (see ``max_txn_outcomes``)."""

    # -- messages -------------------------------------------------------------------------------
    max_message_size: int = 100 * MiB
    """Largest message (all its transfer frames together), checked as the frames arrive."""
    max_value_depth: int = 100
    """Deepest nesting of lists/maps/arrays/described values in a message's sections."""
    large_message_threshold: int = 1 * MiB
    """A message at least this big is streamed to a file as it arrives, not held in memory."""
    max_spool_per_connection: int = 256 * MiB
    """Bytes one connection's unfinished incoming transfers may hold (in memory and in
    ``incoming-*.part`` spool files); the transfer that would pass it has its link detached with
    ``amqp:resource-limit-exceeded`` and its bytes deleted (0 = no limit)."""
    max_spool_total: int = 1024 * MiB
    """Bytes all connections' unfinished incoming transfers may hold together; refused the same
    way (0 = no limit)."""
    transfer_timeout: float = 60.0
    """Seconds an unfinished multi-frame transfer may go without a new frame of it; then its link
    is detached with ``amqp:resource-limit-exceeded`` and its bytes deleted (0 = never)."""

    # -- memory and the store -------------------------------------------------------------------
    queue_memory_limit: int = 32 * MiB
    """Message bytes a queue holds in memory before it pages (or blocks/fails, per the policy)."""
    address_full_policy: AddressFullPolicy = AddressFullPolicy.PAGE
    """What a queue at its ``queue_memory_limit`` does: PAGE, BLOCK or FAIL."""
    max_memory: int = 512 * MiB
    """Message bytes held in memory by all queues together before producers are flow-controlled
    (credit withheld until consumers make room; 0 = no limit)."""
    max_store_size: int = 0
    """Bytes of messages the broker stores (in memory, paged and large-message files) before
    producers are flow-controlled (0 = no limit but the disk)."""
    spill_dir: str | None = None
    """Directory for paging and large-message files (default: ``<data-dir>/spill``, else a
    directory of the broker's own under the system temp directory)."""

    # -- writes to slow peers ---------------------------------------------------------------------
    write_buffer_high: int = 4 * MiB
    """Bytes waiting in a connection's socket buffer before the broker stops sending it messages
    (its credit waits until the buffer drains to ``write_buffer_low``)."""
    write_buffer_low: int = 1 * MiB
    """Resume sending to a paused peer once its socket buffer drains below this."""

    # -- selectors --------------------------------------------------------------------------------
    selector_budget: float = 0.02
    """Seconds of selector matching a queue may spend per event-loop turn before it yields."""
    max_selector_length: int = 16384
    """Longest consumer selector (characters); a longer one is refused at attach (0 = no limit)."""
    max_selector_terms: int = 1000
    """Most conditions a consumer selector may combine with AND/OR/NOT (an IN list is one);
    more is refused at attach (0 = no limit). Bounds the selector's compile time at attach and
    its cost per message."""

    # -- the management node ($management, ``management.py``) -------------------------------------
    management_request_size: int = 65536
    """Largest management request (encoded message bytes); a bigger one is rejected unread."""
    management_rows: int = 1000
    """Rows a QUERY answers at most (ask for the rest with ``offset``)."""
    management_selector_length: int = 4096
    """Longest selector a MOVE may carry."""
    management_move_limit: int = 100000
    """Messages one MOVE or PURGE request takes at most (the CLI repeats the request for more)."""
    management_requests_per_connection: int = 8
    """Management requests of one connection under way at once; more are answered 503."""

    # -- delivery counts ---------------------------------------------------------------------------
    persist_delivery_count: bool = True
    """Store a durable message's delivery count before it is sent, so a message delivered before a
    crash comes back redelivered (JMSRedelivered=true) with its count incremented."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or f.name in ("spill_dir", "address_full_policy"):
                continue
            if not isinstance(value, int | float) or value < 0:
                raise ValueError(f"limit {f.name} must be a number >= 0, got {value!r}")
        if self.max_frame_size < 512:
            raise ValueError(f"limit max_frame_size must be at least 512, got {self.max_frame_size}")
        if self.max_sessions_per_connection < 1 or self.max_sessions_per_connection > 65536:
            raise ValueError("limit max_sessions_per_connection must be 1..65536")
        if self.write_buffer_low > self.write_buffer_high:
            raise ValueError("limit write_buffer_low must not exceed write_buffer_high")

    def replace(self, **changes: Any) -> BrokerLimits:
        """A copy with some fields changed (``None`` values are ignored: 'not given')."""
        given = {k: v for k, v in changes.items() if v is not None}
        return dataclasses.replace(self, **given) if given else self

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def from_mapping(cls, table: Mapping[str, Any], base: BrokerLimits | None = None) -> BrokerLimits:
        """Limits from a config table (``{"max_message_size": 1048576, ...}``); unknown keys and
        values of the wrong type raise ``LimitError`` (a ``ValueError``) naming the key."""
        base = base if base is not None else cls()
        known = {f.name: f for f in dataclasses.fields(cls)}
        changes: dict[str, Any] = {}
        for key, value in table.items():
            name = key.replace("-", "_")
            if name not in known:
                raise LimitError(key, f"unknown limit {key!r} (known: {', '.join(known)})")
            default = getattr(base, name)
            if name == "address_full_policy":
                try:
                    value = AddressFullPolicy(str(value).upper())
                except ValueError:
                    problem = f"limit {key}: expected PAGE, BLOCK or FAIL, got {value!r}"
                    raise LimitError(key, problem) from None
            elif name == "spill_dir":
                if value is not None and not isinstance(value, str):
                    raise LimitError(key, f"limit {key}: expected a directory path, got {value!r}")
            elif isinstance(default, bool):
                if not isinstance(value, bool):
                    raise LimitError(key, f"limit {key}: expected true or false, got {value!r}")
            elif isinstance(default, float):
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise LimitError(key, f"limit {key}: expected a number, got {value!r}")
                value = float(value)
            elif isinstance(default, int):
                if isinstance(value, bool) or not isinstance(value, int):
                    raise LimitError(key, f"limit {key}: expected an integer, got {value!r}")
            changes[name] = value
        try:
            return dataclasses.replace(base, **changes)
        except ValueError as e:  # a value of the right type out of its range (__post_init__)
            bad = next((k for k in table if k.replace("-", "_") in str(e)), None)
            raise LimitError(bad, str(e)) from None
