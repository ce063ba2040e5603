"""The broker's web console: pages, sign-in and actions, as ``Console.handle(Request) ->
Response`` (sans-I/O: the HTTP listener moves the bytes, tests call ``handle`` directly).

Everything it shows and does goes through the ``$management`` node (``management.py``) as the
signed-in user: the same operations, the same permissions (reading needs browse/consume/manage as
for the ``amqp-jms queues``/``consumers`` verbs; move, purge and delete need ``manage``), the
same limits, and the node's own log line for every change, beside the console's audit line
(``console: user … from … MOVE …``).

Sign-in: the broker's users (passwords checked against the config file's SCRAM hashes), failed
attempts limited per source address (``LoginThrottle``); a session is a random cookie
(HttpOnly, SameSite=Strict, Secure over TLS) that lapses after ``session_ttl`` idle seconds. Every
change is a POST carrying the session's CSRF token and, first, a confirmation page. A broker with
no users has no one to sign in: its console shows everything read-only, unless
``allow_anonymous_actions`` (``--console-allow-anonymous-actions``) says otherwise.
"""

from __future__ import annotations

import hmac
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import quote, unquote

from ...protocol.login_throttle import LoginThrottle
from ..management import Reply
from ..metrics import MetricsSnapshot
from . import pages as P
from .history import History
from .http import Request, Response, html, redirect

__all__ = ["Backend", "Console"]

audit = logging.getLogger("amqp_jms.broker.console")

COOKIE = "amqpjms_console"
QUEUE = "org.amqpjms.queue"
SUBSCRIPTION = "org.amqpjms.subscription"
CONNECTION = "org.amqpjms.connection"
CONSUMER = "org.amqpjms.consumer"


class Backend(Protocol):
    """What the console needs of the broker (``broker.py`` runs each call on the broker's loop)."""

    @property
    def users_configured(self) -> bool: ...

    def check_password(self, user: str, password: str) -> bool: ...

    async def manage(self, user: str | None, props: dict[str, Any], body: Any = None) -> Reply:
        """A ``$management`` request made as ``user``."""
        ...

    async def snapshot(self) -> MetricsSnapshot: ...


@dataclass
class Session:
    user: str | None
    csrf: str
    expires: float


class Console:
    def __init__(
        self,
        backend: Backend,
        *,
        allow_anonymous_actions: bool = False,
        session_ttl: float = 1800.0,
        max_sessions: int = 1000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.backend = backend
        self.allow_anonymous_actions = allow_anonymous_actions
        self.session_ttl = session_ttl
        self.max_sessions = max_sessions
        self._clock = clock
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._logins = LoginThrottle()
        self.history = History()
        self._sampled_at = float("-inf")

    # -- sessions ------------------------------------------------------------------------------
    def _session(self, req: Request) -> Session | None:
        token = req.cookie(COOKIE)
        if not token:
            return None
        s = self._sessions.get(token)
        now = self._clock()
        if s is None or s.expires < now:
            self._sessions.pop(token, None)
            return None
        s.expires = now + self.session_ttl
        self._sessions.move_to_end(token)
        return s

    def _new_session(self, user: str | None, req: Request) -> tuple[Session, tuple[str, str]]:
        token = secrets.token_urlsafe(32)
        s = Session(user, secrets.token_urlsafe(24), self._clock() + self.session_ttl)
        self._sessions[token] = s
        while len(self._sessions) > self.max_sessions:
            self._sessions.popitem(last=False)
        secure = "; Secure" if req.secure else ""
        return s, ("Set-Cookie", f"{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/{secure}")

    # -- entry ---------------------------------------------------------------------------------
    async def handle(self, req: Request) -> Response:
        path = req.path
        if path == "/static/console.css":
            return Response(200, P.CSS.encode(), "text/css; charset=utf-8")
        if path == "/static/console.js":
            return Response(200, P.JS.encode(), "text/javascript; charset=utf-8")
        if path == "/login":
            return await self._login(req)
        if path == "/logout":
            token = req.cookie(COOKIE)
            if token:
                self._sessions.pop(token, None)
            return redirect("/login" if self.backend.users_configured else "/",
                            [("Set-Cookie", f"{COOKIE}=; Max-Age=0; Path=/")])
        session = self._session(req)
        cookie: list[tuple[str, str]] = []
        if session is None:
            if self.backend.users_configured:
                return redirect("/login?next=" + quote(req.target, safe=""))
            session, set_cookie = self._new_session(None, req)  # anonymous, for the CSRF token
            cookie.append(set_cookie)
        try:
            if req.method == "POST":
                response = await self._action(req, session)
            elif req.method in ("GET", "HEAD"):
                response = await self._page(req, session)
            else:
                response = html(405, "GET or POST", [("Allow", "GET, HEAD, POST")])
        except _Refusal as exc:
            response = html(exc.status, P.page("Refused", P.notice(exc.reason), user=session.user,
                                               signed_in=session.user is not None))
        response.headers.extend(cookie)
        return response

    # -- sign-in -------------------------------------------------------------------------------
    async def _login(self, req: Request) -> Response:
        if not self.backend.users_configured:
            return redirect("/")
        next_path = req.query.get("next", "/")
        if req.method != "POST":
            return html(200, P.page("Sign in", P.login(None, _local(next_path)), user=None))
        form = req.form
        next_path = _local(form.get("next", "/"))
        source = req.peer.rsplit(":", 1)[0]
        if self._logins.blocked(source):
            return html(429, P.page("Sign in", P.login("Too many failed sign-ins from this address: "
                                                       "try again later.", next_path), user=None))
        user, password = form.get("user", ""), form.get("password", "")
        if not user or not self.backend.check_password(user, password):
            self._logins.failed(source)
            audit.warning("console: failed sign-in as %r from %s", user, req.peer)
            return html(401, P.page("Sign in", P.login("Wrong user name or password.", next_path), user=None))
        _, set_cookie = self._new_session(user, req)
        audit.info("console: user %r signed in from %s", user, req.peer)
        return redirect(next_path, [set_cookie])

    # -- pages ---------------------------------------------------------------------------------
    async def _sample(self) -> None:
        now = self._clock()
        if now - self._sampled_at >= 1.0:
            self._sampled_at = now
            self.history.add(await self.backend.snapshot())

    async def _rows(self, session: Session, entity: str) -> list[dict[str, Any]]:
        reply = await self.backend.manage(session.user, {"operation": "QUERY", "type": "org.amqp.management",
                                                         "entityType": entity})
        if reply.code == 403 or reply.code == 401:
            return []
        if reply.code != 200:
            raise _Refusal(reply.code, reply.description)
        names = reply.body["attributeNames"]
        return [dict(zip(names, row)) for row in reply.body["results"]]

    async def _page(self, req: Request, session: Session) -> Response:
        await self._sample()
        path = req.path
        msg = req.query.get("done")
        if path == "/":
            title, active, body = "Overview", "/", await self._overview(session)
        elif path == "/queues":
            title, active, body = "Queues", "/queues", await self._queues(session)
        elif path.startswith("/queues/"):
            name = unquote(path[len("/queues/"):])
            title, active = f"Queue {name}", "/queues"
            body = await self._queue(session, name, int(req.query.get("offset", "0") or 0))
        elif path == "/connections":
            title, active, body = "Connections", "/connections", await self._connections(session)
        elif path == "/subscriptions":
            title, active, body = "Subscriptions", "/subscriptions", await self._subscriptions(session)
        else:
            return html(404, P.page("Not found", P.notice(f"no page {path}"), user=session.user,
                                    signed_in=session.user is not None))
        body = P.notice(msg, ok=True) + body
        if req.headers.get("x-console-fragment") == "1":
            return html(200, body)
        return html(200, P.page(title, body, user=session.user, active=active, refresh=True,
                                signed_in=session.user is not None))

    def _read_only_note(self, session: Session) -> str:
        if session.user is None and not self.allow_anonymous_actions:
            return ('<p class="muted">Read-only: this broker has no users, so nobody signs in to '
                    "change anything (start it with --console-allow-anonymous-actions to allow it).</p>")
        return ""

    async def _overview(self, session: Session) -> str:
        snap = self.history.last
        queues = await self._rows(session, QUEUE)
        conns = await self._rows(session, CONNECTION)
        ins, outs = self.history.totals()
        dlq = sum(q.dead_lettered for q in snap.queues) if snap else 0
        cards = "".join(f'<div class="card"><b>{v}</b><span>{k}</span></div>' for k, v in (
            ("connections", snap.connections if snap else len(conns)), ("queues", len(queues)),
            ("messages waiting", sum(int(q.get("messageCount") or 0) for q in queues)),
            ("in / s", f"{ins:,.0f}"), ("out / s", f"{outs:,.0f}"), ("dead-lettered", dlq)))
        top = sorted(queues, key=lambda r: -int(r.get("messageCount") or 0))[:10]
        rows = [(f'<a href="/queues/{P.q(str(r["name"]))}">{P.esc(r["name"])}</a>',
                 P.esc(r.get("messageCount")), P.esc(r.get("consumerCount"))) for r in top]
        return (f"<h1>Overview</h1><div class=cards>{cards}</div>" + self._read_only_note(session) +
                "<h2>Deepest queues</h2>" + P.table(["queue", "depth", "consumers"], rows, {1, 2}))

    async def _queues(self, session: Session) -> str:
        queues = await self._rows(session, QUEUE)
        snap = self.history.last
        rows = []
        for r in sorted(queues, key=lambda r: str(r["name"])):
            name = str(r["name"])
            stats = snap.queue(name) if snap else None
            ins, outs = self.history.rates(name)
            depth = [float(s.depth) for s in self.history.samples(name)]
            rows.append((f'<a href="/queues/{P.q(name)}">{P.esc(name)}</a>', P.esc(r.get("kind")),
                         P.esc(r.get("messageCount")), f"{ins:,.1f}", f"{outs:,.1f}", P.sparkline(depth),
                         P.esc(r.get("consumerCount")), P.esc(stats.dead_lettered if stats else 0)))
        return ("<h1>Queues</h1>" + P.table(
            ["queue", "kind", "depth", "in/s", "out/s", "depth, recent", "consumers", "dead-lettered"],
            rows, {2, 3, 4, 6, 7}))

    async def _queue(self, session: Session, name: str, offset: int) -> str:
        offset = max(0, offset)
        reply = await self.backend.manage(session.user, {"operation": "BROWSE", "type": QUEUE, "name": name,
                                                         "offset": offset, "count": 20})
        if reply.code != 200:
            raise _Refusal(reply.code, reply.description)
        samples = self.history.samples(name)
        ins, outs = P.rate_series(samples)
        head = (f"<h1>Queue {P.esc(name)}</h1><div class=cards>"
                f'<div class="card">{P.sparkline([float(s.depth) for s in samples], 220, 40)}'
                '<span>depth</span></div>'
                f'<div class="card">{P.sparkline(ins, 220, 40)}<span>in / s</span></div>'
                f'<div class="card">{P.sparkline(outs, 220, 40)}<span>out / s</span></div></div>')
        msgs = []
        for i, m in enumerate(reply.body, start=offset + 1):
            if "error" in m:
                msgs.append((str(i), "", P.esc(m["error"]), "", ""))
                continue
            headers = "<br>".join(f"{k}: {P.esc(m.get(k))}" for k in (
                "messageId", "correlationId", "type", "deliveryMode", "priority", "replyTo")
                if m.get(k) not in (None, "")) + f"<br>timestamp: {P.when(int(m.get('timestamp') or 0))}"
            props = "<br>".join(f"{P.esc(k)} <span class=muted>({P.esc(t)})</span> = {P.esc(v)}"
                                for k, (t, v) in m.get("properties", {}).items())
            body = f"<b>{P.esc(m['bodyType'])}</b><pre>{P.esc(m['body'])}</pre>"
            msgs.append((str(i), headers, props, body,
                         f"{P.esc(m.get('deliveryCount'))} · {P.esc(m.get('size'))} B"))
        pager = ""
        if offset:
            pager += f'<a href="?offset={max(0, offset - 20)}">← newer</a> '
        if len(reply.body) == 20:
            pager += f'<a href="?offset={offset + 20}">older →</a>'
        consumers = [c for c in await self._rows(session, CONSUMER) if c.get("queue") == name]
        crow = [(P.esc(c.get("user")), P.esc(c.get("remoteAddress")), P.esc(c.get("selector")),
                 P.esc(c.get("credit")), P.esc(c.get("deliveringCount"))) for c in consumers]
        return (head + self._read_only_note(session) + "<h2>Messages</h2>" +
                P.table(["#", "headers", "properties", "body", "deliveries · size"], msgs) +
                f"<p>{pager}</p><h2>Consumers</h2>" +
                P.table(["user", "address", "selector", "credit", "delivering"], crow) +
                self._queue_actions(session, name))

    def _queue_actions(self, session: Session, name: str) -> str:
        base = f"/queues/{P.q(name)}"
        csrf = P.csrf_field(session.csrf)
        return ("<h2>Actions</h2>"
                f'<form method="post" action="{base}/move" class="inline">{csrf}'
                '<input name="destination" placeholder="to queue" required> '
                '<input name="selector" placeholder="selector (optional)" size="30"> '
                '<button type="submit">Move messages</button></form> '
                f'<form method="post" action="{base}/purge" class="inline">{csrf}'
                '<button type="submit" class="danger">Purge</button></form> '
                f'<form method="post" action="{base}/delete" class="inline">{csrf}'
                '<button type="submit" class="danger">Delete queue</button></form>')

    async def _connections(self, session: Session) -> str:
        conns = await self._rows(session, CONNECTION)
        consumers = await self._rows(session, CONSUMER)
        crow = [(P.esc(c.get("user")), P.esc(c.get("remoteAddress")), P.esc(c.get("containerId")),
                 P.esc(c.get("sessionCount")), P.esc(c.get("linkCount"))) for c in conns]
        krow = [(P.esc(c.get("address")), P.esc(c.get("user")), P.esc(c.get("remoteAddress")),
                 P.esc(c.get("selector")), "browser" if c.get("browser") else "consumer",
                 P.esc(c.get("credit")), P.esc(c.get("deliveringCount"))) for c in consumers]
        note = "" if conns or not session.user else (
            '<p class="muted">Connections are shown to users with manage on $management.</p>')
        return ("<h1>Connections</h1>" + note +
                P.table(["user", "address", "container", "sessions", "links"], crow, {3, 4}) +
                "<h2>Consumers</h2>" +
                P.table(["reads", "user", "address", "selector", "kind", "credit", "delivering"], krow,
                        {5, 6}))

    async def _subscriptions(self, session: Session) -> str:
        subs = await self._rows(session, SUBSCRIPTION)
        csrf = P.csrf_field(session.csrf)
        rows = []
        for s in sorted(subs, key=lambda s: str(s["identity"])):
            ident = str(s["identity"])
            form = (f'<form method="post" action="/subscriptions/{P.q(ident)}/delete" class="inline">{csrf}'
                    '<button type="submit" class="danger">Remove</button></form>')
            rows.append((P.esc(ident), P.esc(s.get("topic")), P.esc(s.get("selector")),
                         "yes" if s.get("durable") else "no", "yes" if s.get("shared") else "no",
                         P.esc(s.get("messageCount")), P.esc(s.get("consumerCount")), form))
        return ("<h1>Subscriptions</h1>" + P.table(
            ["identity", "topic", "selector", "durable", "shared", "waiting", "consumers", ""], rows, {5, 6}))

    # -- actions -------------------------------------------------------------------------------
    async def _action(self, req: Request, session: Session) -> Response:
        form = req.form
        token = form.get("csrf", "")
        if not token or not hmac.compare_digest(token, session.csrf):
            audit.warning("console: refused %s %s from %s: missing or wrong CSRF token",
                          req.method, req.path, req.peer)
            raise _Refusal(403, "The form was not sent by this console session (CSRF token missing or "
                                "wrong): reload the page and try again.")
        if session.user is None and not self.allow_anonymous_actions:
            raise _Refusal(403, "The console is read-only: this broker has no users to sign in as "
                                "(start it with --console-allow-anonymous-actions to allow changes).")
        parts = req.path.strip("/").split("/")
        if len(parts) != 3 or parts[0] not in ("queues", "subscriptions"):
            raise _Refusal(404, f"no action {req.path}")
        kind, name, verb = parts[0], unquote(parts[1]), parts[2]
        back = f"/{kind}/{P.q(name)}" if kind == "queues" else "/subscriptions"
        if kind == "queues" and verb == "move":
            dest = form.get("destination", "").strip()
            if not dest:
                raise _Refusal(400, "Move needs a destination queue.")
            selector = form.get("selector", "").strip()
            props = {"operation": "MOVE", "type": QUEUE, "name": name, "destination": dest}
            if selector:
                props["selector"] = selector
            what = (f"Move the messages of {name!r} to {dest!r}" +
                    (f" that match {selector!r}" if selector else ""))
            fields = {"destination": dest, "selector": selector}
        elif kind == "queues" and verb in ("purge", "delete"):
            props = {"operation": verb.upper(), "type": QUEUE, "name": name}
            what = f"Purge every message of {name!r}" if verb == "purge" else f"Delete the queue {name!r}"
            fields = {}
            if verb == "delete":
                back = "/queues"
        elif kind == "subscriptions" and verb == "delete":
            props = {"operation": "DELETE", "type": SUBSCRIPTION, "name": name}
            what, fields = f"Remove the subscription {name!r}", {}
        else:
            raise _Refusal(404, f"no action {verb!r} on {kind}")
        if form.get("confirmed") != "yes":
            return html(200, P.page("Confirm", P.confirm(req.path, what, fields, session.csrf, back),
                                    user=session.user, signed_in=session.user is not None))
        reply = await self.backend.manage(session.user, props)
        who = f"user {session.user!r}" if session.user else "an anonymous user"
        audit.info("console: %s from %s: %s -> %d %s", who, req.peer, what, reply.code, reply.description)
        if reply.code >= 300:
            raise _Refusal(reply.code, reply.description)
        count = reply.body.get("count") if isinstance(reply.body, dict) else reply.properties.get("count")
        done = f"{what}: done" + (f" ({count} messages)" if count is not None else "")
        return redirect(f"{back}?done={quote(done)}")


class _Refusal(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def _local(path: str) -> str:
    """Only a path on this console is a place to go after signing in (no open redirect)."""
    return path if path.startswith("/") and not path.startswith("//") else "/"
