"""The ``$management`` node: AMQP Management 1.0 (OASIS working draft) requests, answered.

A client sends a request message to the address ``$management`` with the application properties
``operation``, ``type`` and ``name`` (or ``identity``), a ``message-id`` and a ``reply-to``; the
answer goes to that reply-to address with ``correlation-id`` = the request's message-id and the
application properties ``statusCode`` (an HTTP-like int) and ``statusDescription``. Operations:

``QUERY`` (type ``org.amqp.management``)  rows of the entities of ``entityType`` (application
        property; all types if absent): body ``{"attributeNames": [...]}`` in, ``{"attributeNames":
        [...], "results": [[...], ...]}`` out, paged by the ``offset``/``count`` properties;
``GET-TYPES``, ``GET-OPERATIONS``, ``GET-ATTRIBUTES``, ``GET-MGMT-NODES`` the node's discovery;
``READ``     one entity's attributes (a map);
``DELETE``   a queue (its consumers are detached) or a subscription not in use (204);
``PURGE``    a queue's or subscription's messages (custom; optional property ``limit``);
``MOVE``     a queue's messages to another queue (custom; properties ``destination``, optional
             ``selector`` and ``limit``);
``BROWSE``   a page of a queue's messages without taking them (custom; properties ``offset`` and
             ``count``, at most ``management_rows``): each a map of its JMS headers, typed
             properties and a body preview (``message_preview.py``); needs ``browse`` or ``manage``.

PURGE and MOVE answer ``{"count": n, "more": bool}``: ``more`` when the request stopped at its
limit (``limit``, at most ``management_move_limit``) and another request may find more.

Authorization (the broker's roles, ``authorization.py``): reading an entity needs ``browse`` (a
queue) or ``consume`` (a topic or subscription, on the topic) or ``manage``, on the entity's
address; PURGE, MOVE and DELETE need ``manage`` on it (MOVE on both queues); consumers (who reads a
queue: their connection, user, address, selector, credit) need ``manage`` on the address they read;
connections are the broker's, read with ``manage`` on the address ``$management``. A refusal
answers 401 (anonymous) or 403 with the reason. Every size a requester controls has a limit
(``BrokerLimits.management_*``), and a purge, move or delete of a deep queue runs in slices
(``extract.py``) between which the event loop serves everyone else, as does a browse deep into one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from proton import Message, int32

from ..._logs import BROKER as log
from ...exceptions import InvalidSelectorException
from ..routing.authorization import Permission
from ..routing.core import MANAGEMENT_ADDRESS
from ..routing.extract import Extraction
from ..routing.nodes import NodeKind, Subscription
from ..routing.queue import MessageQueue
from ..routing.requests import RequestRefused, decode_request
from ..routing.selectors import compile_selector
from ..storage.message import BrokerMessage
from .management_entities import (
    CONNECTION,
    ENTITY_TYPES,
    QUEUE,
    EntityType,
    entity_type,
    subscription_identity,
)
from .message_preview import preview

#: messages a browse steps through between looks at the clock (``_browse_page``)
BROWSE_CHECK = 256

if TYPE_CHECKING:
    from ..protocol.connection import BrokerConnection
    from ..routing.core import BrokerCore

__all__ = ["ManagementNode", "Reply"]


NODE_TYPE = "org.amqp.management"
NODE_OPERATIONS = ("QUERY", "GET-TYPES", "GET-OPERATIONS", "GET-ATTRIBUTES", "GET-MGMT-NODES")
ENTITY_OPERATIONS = ("READ", "DELETE", "PURGE", "MOVE", "BROWSE")


class Requester(Protocol):
    """Who makes a request: an AMQP connection (``BrokerConnection``), or a user signed in to
    the broker's console. Authorization asks it, the per-requester limits count by its ``id``."""

    @property
    def id(self) -> int: ...

    @property
    def user(self) -> str | None: ...

    def refusal(self, address: str, permission: Permission) -> str | None:
        """None if the requester may, else why not."""
        ...


@dataclass
class Reply:
    """An answer: status, description, body, and any extra application properties."""

    code: int
    description: str
    body: Any = None
    properties: dict[str, Any] = field(default_factory=dict)


class Refused(Exception):
    """A request answered with an error status (raised inside the handlers)."""

    def __init__(self, code: int, description: str) -> None:
        super().__init__(description)
        self.reply = Reply(code, description)


def _text(props: dict[Any, Any], key: str, *, required: bool = False) -> str | None:
    value = props.get(key)
    if value is None:
        if required:
            raise Refused(400, f"the request has no {key!r} application property")
        return None
    if not isinstance(value, str):
        raise Refused(400, f"application property {key!r} must be a string, got {type(value).__name__}")
    return str(value)


def _count(props: dict[Any, Any], key: str) -> int | None:
    value = props.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise Refused(400, f"application property {key!r} must be a whole number >= 0, got {value!r}")
    return int(value)


class ManagementNode:
    """The broker's management node; one per broker, on its event loop."""

    def __init__(self, core: BrokerCore) -> None:
        self.core = core
        self.router = core.router
        self._running: dict[int, int] = {}  # connection id -> sliced operations under way
        self._tasks: set[asyncio.Task[None]] = set()

    def close(self) -> None:
        """The broker is stopping: operations under way end after the step they are in (each
        step has already disposed of what it took, so nothing is lost)."""
        for task in list(self._tasks):
            task.cancel()

    # -- a request arrives ---------------------------------------------------------------------
    def receive(self, conn: BrokerConnection, data: bytes) -> tuple[str, str] | None:
        """A request on ``conn``'s link to ``$management``. ``None``: taken (accept it; the answer
        goes to its reply-to); else ``(condition, description)`` to reject the delivery with,
        when there is nowhere to answer or it is too big to read."""
        try:
            request = decode_request(data, self.core.limits, "management")
        except RequestRefused as exc:
            return exc.refusal
        reply_to = request.reply_to
        if not reply_to:
            return "amqp:invalid-field", "a management request needs a reply-to address for the answer"
        refusal = self._reply_refusal(conn, str(reply_to))
        if refusal is not None:
            return refusal
        correlation = request.id if request.id is not None else request.correlation_id
        answer = _Answer(self, str(reply_to), correlation)
        try:
            result = self._dispatch(conn, request.properties or {}, request.body)
        except Refused as exc:
            answer(exc.reply)
            return None
        if isinstance(result, Reply):
            answer(result)
            return None
        self._start(conn, result, answer)
        return None

    def _reply_refusal(self, conn: BrokerConnection, reply_to: str) -> tuple[str, str] | None:
        if self.router.node_kind(reply_to) is None:
            return "amqp:not-found", f"reply-to {reply_to!r}: no such node to answer to"
        if self.core.temp_owner.get(reply_to) == conn.id:
            return None
        denied = conn.refusal(reply_to, Permission.SEND)
        return None if denied is None else ("amqp:unauthorized-access", f"reply-to: {denied}")

    async def call(self, requester: Requester, props: dict[str, Any], body: Any = None) -> Reply:
        """A request made in-process (the broker's console), answered as one over AMQP would be:
        the same operations, authorization, limits and log lines. Runs on the broker's loop."""
        done: asyncio.Future[Reply] = self.core.loop.create_future()

        def answer(reply: Reply) -> None:
            if not done.done():
                done.set_result(reply)

        try:
            result = self._dispatch(requester, props, body)
        except Refused as exc:
            return exc.reply
        if isinstance(result, Reply):
            return result
        self._start(requester, result, answer)
        return await done

    def _start(self, conn: Requester, work: Awaitable[Reply], answer: Callable[[Reply], None]) -> None:
        """Run a sliced operation as a task; at most ``management_requests_per_connection`` each."""
        limit = self.core.limits.management_requests_per_connection
        running = self._running.get(conn.id, 0)
        if limit and running >= limit:
            close = getattr(work, "close", None)
            if close is not None:
                close()  # the coroutine never runs
            answer(Reply(503, f"the connection has {limit} management operations under way "
                              "(management_requests_per_connection); retry when one has answered"))
            return
        self._running[conn.id] = running + 1

        async def run() -> None:
            try:
                reply = await work
            except Refused as exc:
                reply = exc.reply
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a bug: answer it rather than leave the requester waiting
                log.exception("management operation failed")
                reply = Reply(500, f"internal error: {type(exc).__name__}: {exc}")
            finally:
                left = self._running.get(conn.id, 1) - 1
                if left > 0:
                    self._running[conn.id] = left
                else:
                    self._running.pop(conn.id, None)
            answer(reply)

        task = self.core.loop.create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- dispatch ------------------------------------------------------------------------------
    def _dispatch(self, conn: Requester, props: Any, body: Any) -> Reply | Awaitable[Reply]:
        if not isinstance(props, dict):
            raise Refused(400, "the request's application properties are not a map")
        operation = _text(props, "operation", required=True)
        type_name = _text(props, "type", required=True)
        assert operation is not None and type_name is not None
        if operation not in NODE_OPERATIONS and operation not in ENTITY_OPERATIONS:
            supported = ", ".join(NODE_OPERATIONS + ENTITY_OPERATIONS)
            raise Refused(501, f"operation {operation!r} is not implemented (supported: {supported})")
        if operation in NODE_OPERATIONS:
            if type_name != NODE_TYPE:
                raise Refused(400, f"{operation} is an operation of the management node: type must be "
                                   f"{NODE_TYPE!r}, got {type_name!r}")
            return self._node_operation(conn, operation, props, body)
        etype = entity_type(type_name)
        if etype is None:
            raise Refused(404, f"unknown entity type {type_name!r} (known: {', '.join(ENTITY_TYPES)})")
        if operation not in etype.operations:
            raise Refused(501, f"operation {operation!r} is not implemented for {etype.name} "
                               f"(it has {', '.join(etype.operations)})")
        name = _text(props, "name") or _text(props, "identity")
        if not name:
            raise Refused(400, f"{operation} needs the entity's 'name' or 'identity' application property")
        if operation == "READ":
            return self._read(conn, etype, name)
        if operation == "BROWSE":
            return self._browse(conn, name, props)
        if etype.name == QUEUE:
            return self._queue_operation(conn, operation, name, props)
        return self._subscription_operation(conn, operation, name, props)

    # -- authorization -------------------------------------------------------------------------
    def _check(self, conn: Requester, address: str, *permissions: Permission) -> None:
        """Allowed if any one of ``permissions`` is granted on ``address``; else 401/403."""
        first: str | None = None
        for perm in permissions:
            denied = conn.refusal(address, perm)
            if denied is None:
                return
            first = first or denied
        raise Refused(401 if conn.user is None else 403, first or "not authorized")

    def _may_read(self, conn: Requester, etype: EntityType, address: str) -> bool:
        return any(conn.refusal(address, p) is None for p in etype.read_permissions)

    # -- node operations -----------------------------------------------------------------------
    def _node_operation(self, conn: Requester, operation: str, props: dict[Any, Any],
                        body: Any) -> Reply:
        if operation == "QUERY":
            return self._query(conn, props, body)
        if operation == "GET-TYPES":
            types: dict[str, list[str]] = {t: [] for t in ENTITY_TYPES}
            types[NODE_TYPE] = []
            return Reply(200, "OK", types)
        if operation == "GET-OPERATIONS":
            ops: dict[str, Any] = {t.name: {op: [] for op in t.operations} for t in ENTITY_TYPES.values()}
            ops[NODE_TYPE] = {op: [] for op in NODE_OPERATIONS}
            ops[QUEUE]["MOVE"] = ["destination", "selector", "limit"]
            ops[QUEUE]["PURGE"] = ["limit"]
            ops[QUEUE]["BROWSE"] = ["offset", "count"]
            return Reply(200, "OK", ops)
        if operation == "GET-ATTRIBUTES":
            return Reply(200, "OK", {t.name: list(t.attributes) for t in ENTITY_TYPES.values()})
        return Reply(200, "OK", [])  # GET-MGMT-NODES: no other management nodes known

    def _query(self, conn: Requester, props: dict[Any, Any], body: Any) -> Reply:
        wanted = _text(props, "entityType")
        if wanted is None:
            types = list(ENTITY_TYPES.values())
        else:
            found = entity_type(wanted)
            if found is None:
                raise Refused(404, f"unknown entity type {wanted!r} (known: {', '.join(ENTITY_TYPES)})")
            types = [found]
            if found.name == CONNECTION:  # the broker's, not an address's: refused, not filtered
                self._check(conn, MANAGEMENT_ADDRESS, *found.read_permissions)
        names = _attribute_names(body)
        if not names:
            names = list(dict.fromkeys(a for t in types for a in t.attributes))
        offset = _count(props, "offset") or 0
        limit = self.core.limits.management_rows
        count = _count(props, "count")
        if count is None or (limit and count > limit):
            count = limit or None
        rows: list[dict[str, Any]] = []
        for etype in types:
            rows.extend(row for address, row in etype.rows(self.core) if self._may_read(conn, etype, address))
        rows.sort(key=lambda r: (str(r["type"]), str(r["identity"])))  # stable order for paging
        page = rows[offset:offset + count] if count is not None else rows[offset:]
        results = [[row.get(n) for n in names] for row in page]
        return Reply(200, "OK", {"attributeNames": names, "results": results},
                     {"count": int32(len(results))})

    def _read(self, conn: Requester, etype: EntityType, name: str) -> Reply:
        for address, row in etype.rows(self.core):
            if row["identity"] == name or row["name"] == name:
                if not self._may_read(conn, etype, address):
                    self._check(conn, address, *etype.read_permissions)
                return Reply(200, "OK", {k: row.get(k) for k in etype.attributes})
        raise Refused(404, f"no {etype.name} {name!r}")

    # -- queue operations ----------------------------------------------------------------------
    def _queue(self, name: str) -> MessageQueue:
        q = self.router.queues.get(name)
        prefixes = self.core.prefixes
        if q is None and prefixes is not None:  # prefix mode: 'orders' is 'queue://orders'
            q = self.router.queues.get(prefixes.queue_address(name))
        if q is None:
            raise Refused(404, f"no queue {name!r}")
        return q

    def _queue_operation(self, conn: Requester, operation: str, name: str,
                         props: dict[Any, Any]) -> Awaitable[Reply]:
        q = self._queue(name)
        name = q.name
        self._check(conn, name, Permission.MANAGE)
        limit = self._request_limit(props)
        if operation == "PURGE":
            return self._purge(conn, q, limit)
        if operation == "DELETE":
            if self.router.kinds.get(name) is not NodeKind.QUEUE:
                raise Refused(400, f"{name!r} is a temporary queue: it goes with its connection")
            return self._delete_queue(conn, q)
        destination = _text(props, "destination", required=True)
        assert destination is not None
        target = self._queue(destination)
        destination = target.name
        if target is q:
            raise Refused(400, "MOVE: destination is the queue itself")
        self._check(conn, destination, Permission.MANAGE)
        selector = _text(props, "selector")
        max_len = self.core.limits.management_selector_length
        if selector and max_len and len(selector) > max_len:
            raise Refused(400, f"selector of {len(selector)} characters exceeds the limit of {max_len} "
                               "(management_selector_length)")
        try:
            pred = compile_selector(selector) if selector else None
        except InvalidSelectorException as exc:
            raise Refused(400, str(exc)) from None  # it quotes the selector, shortened
        return self._move(conn, q, destination, pred, limit)

    def _browse(self, conn: Requester, name: str, props: dict[Any, Any]) -> Awaitable[Reply]:
        """A page of the queue's messages in delivery order, left where they are. Checked now;
        read in slices (:meth:`_browse_page`)."""
        q = self._queue(name)
        self._check(conn, q.name, Permission.BROWSE, Permission.MANAGE)
        offset = _count(props, "offset") or 0
        cap = min(self.core.limits.management_rows or 100, 100)  # decoded on the loop: small pages
        count = min(_count(props, "count") or cap, cap)
        return self._browse_page(q, offset, count)

    async def _browse_page(self, q: MessageQueue, offset: int, count: int) -> Reply:
        """Skipping ``offset`` messages of a deep queue (a paged one read back from disk) took
        half a second of the loop in one piece; it yields to the loop every ``selector_budget``
        seconds of work (checked every :data:`BROWSE_CHECK` messages), as a move does."""
        budget = self.core.limits.selector_budget
        clock = time.perf_counter
        started = clock()
        rows: list[dict[str, Any]] = []
        for i, m in enumerate(q.browse()):
            if len(rows) >= count:
                break
            if i % BROWSE_CHECK == 0 and clock() - started > budget:
                await asyncio.sleep(0)
                if self.router.queues.get(q.name) is not q:
                    raise Refused(404, f"queue {q.name!r} was deleted while it was browsed")
                started = clock()
            if i < offset:
                continue
            row = preview(m.wire_bytes())
            row["deliveryCount"] = m.delivery_count
            rows.append(row)
        return Reply(200, "OK", rows, {"count": int32(len(rows))})

    def _request_limit(self, props: dict[Any, Any]) -> int:
        cap = self.core.limits.management_move_limit
        asked = _count(props, "limit")
        if asked == 0:
            raise Refused(400, "application property 'limit' must be at least 1")
        if asked is None:
            return cap
        return min(asked, cap) if cap else asked

    async def _drain(self, q: MessageQueue, ext: Extraction,
                     each: Callable[[list[BrokerMessage]], None], still: Callable[[], str | None]) -> int:
        """Run ``ext`` a step per event-loop turn; ``each`` disposes of a step's messages in the
        same turn (nothing is held across turns), ``still`` stops it early with a reason."""
        try:
            while not ext.done:
                why = still()
                if why is not None:
                    raise Refused(409, f"{why} (after {ext.taken} messages)")
                taken = ext.step(self.router.clock())
                if taken:
                    each(taken)
                    if self.router.on_consumed is not None:
                        self.router.on_consumed(q)
                await asyncio.sleep(0)
        finally:
            ext.close()
        return ext.taken

    def _forget(self, q: MessageQueue) -> Callable[[list[BrokerMessage]], None]:
        store = self.core.store

        def each(msgs: list[BrokerMessage]) -> None:
            q.counters.removed += len(msgs)  # the queue's figures stay whole (metrics.py)
            for m in msgs:
                if m.stored:
                    store.remove(q.name, m)
                    m.stored = False
        return each

    async def _purge(self, conn: Requester, q: MessageQueue, limit: int) -> Reply:
        ext = Extraction(q, limit=limit, delayed=True, seconds=self.core.limits.selector_budget)
        n = await self._drain(q, ext, self._forget(q), lambda: None)
        log.info("management: %s purged %d messages from %r", _who(conn), n, q.name)
        return Reply(200, "OK", {"count": n, "more": 0 < limit <= n})

    async def _move(self, conn: Requester, q: MessageQueue, destination: str,
                    pred: Callable[[BrokerMessage], bool] | None, limit: int) -> Reply:
        forget = self._forget(q)
        router = self.router

        def each(msgs: list[BrokerMessage]) -> None:
            forget(msgs)
            for m in msgs:
                copy = m.copy()  # a new record (and store row) in the destination
                copy.delivery_count = 0  # a fresh start: moved back from the DLQ, it gets every attempt again
                router.publish(destination, copy)

        def gone() -> str | None:
            return None if destination in router.queues else f"destination {destination!r} was deleted"

        ext = Extraction(q, pred=pred, limit=limit, seconds=self.core.limits.selector_budget)
        n = await self._drain(q, ext, each, gone)
        log.info("management: %s moved %d messages from %r to %r", _who(conn), n, q.name, destination)
        return Reply(200, "OK", {"count": n, "more": 0 < limit <= n})

    async def _delete_queue(self, conn: Requester, q: MessageQueue) -> Reply:
        name = q.name
        self.core.close_consumers_of(name)
        ext = Extraction(q, delayed=True, seconds=self.core.limits.selector_budget)
        n = await self._drain(q, ext, self._forget(q), lambda: None)
        if self.router.queues.get(name) is q:
            self.core.close_consumers_of(name)  # any that attached meanwhile
            self.router.delete_node(name)
        log.info("management: %s deleted queue %r (%d messages)", _who(conn), name, n)
        return Reply(204, "No Content", None, {"count": int32(n)})

    # -- subscription operations ---------------------------------------------------------------
    def _subscription(self, identity: str) -> Subscription:
        """``<client-id>:<name>``; either may hold a ':' itself (generated client ids do), so
        every split is tried, durable subscriptions first."""
        splits = [i for i, ch in enumerate(identity) if ch == ":"]
        for kind in ("durable", "volatile"):
            for i in splits or [-1]:
                client_id, name = identity[:max(i, 0)], identity[i + 1:]
                sub = self.router.subscriptions.get((kind, client_id or None, name))
                if sub is not None:
                    return sub
        raise Refused(404, f"no subscription {identity!r} (identity is <client-id>:<name>)")

    def _subscription_operation(self, conn: Requester, operation: str, identity: str,
                                props: dict[Any, Any]) -> Awaitable[Reply]:
        sub = self._subscription(identity)
        self._check(conn, sub.topic, Permission.MANAGE)
        limit = self._request_limit(props) if operation == "PURGE" else 0
        if operation == "DELETE" and sub.links:
            raise Refused(409, f"subscription {identity!r} has {sub.links} active consumer(s): "
                               "close them first")
        return self._purge_subscription(conn, sub, limit, delete=operation == "DELETE")

    async def _purge_subscription(self, conn: Requester, sub: Subscription, limit: int, *,
                                  delete: bool) -> Reply:
        identity = subscription_identity(sub)

        def in_use() -> str | None:
            return f"subscription {identity!r} got a consumer" if delete and sub.links else None

        ext = Extraction(sub.queue, limit=limit, delayed=True, seconds=self.core.limits.selector_budget)
        n = await self._drain(sub.queue, ext, self._forget(sub.queue), in_use)
        if not delete:
            log.info("management: %s purged %d messages from subscription %r", _who(conn), n, identity)
            return Reply(200, "OK", {"count": n, "more": 0 < limit <= n})
        if sub.key is not None and self.router.subscriptions.get(sub.key) is sub:
            self.router.unsubscribe(sub)
        log.info("management: %s removed subscription %r (%d messages)", _who(conn), identity, n)
        return Reply(204, "No Content", None, {"count": int32(n)})


class _Answer:
    """Sends one reply to the requester's reply-to address (once the answer is known)."""

    def __init__(self, node: ManagementNode, reply_to: str, correlation: Any) -> None:
        self.node = node
        self.reply_to = reply_to
        self.correlation = correlation

    def __call__(self, reply: Reply) -> None:
        props: dict[str, Any] = {"statusCode": int32(reply.code), "statusDescription": reply.description}
        props.update(reply.properties)
        msg = Message(address=self.reply_to, correlation_id=self.correlation, properties=props,
                      body=reply.body)
        router = self.node.router
        # a requester gone meanwhile (its temporary reply queue deleted) is simply not answered
        router.publish(self.reply_to, BrokerMessage.parse(bytes(msg.encode()), now=router.clock()))


def _attribute_names(body: Any) -> list[str]:
    if body is None:
        return []
    if not isinstance(body, dict):
        raise Refused(400, "a QUERY body must be a map (with 'attributeNames')")
    names = body.get("attributeNames")
    if names is None:
        return []
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise Refused(400, "'attributeNames' must be a list of strings")
    if len(names) > 256:
        raise Refused(400, f"'attributeNames' lists {len(names)} names (at most 256)")
    return [str(n) for n in names]


def _who(conn: Requester) -> str:
    return f"user {conn.user!r}" if conn.user is not None else "an anonymous user"

