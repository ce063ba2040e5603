"""The console's pages: server-rendered HTML from plain values (pure functions, no I/O).

Every value that came from a peer (queue names, selectors, message bodies, user names) goes
through :func:`esc`; forms that change something carry the session's CSRF token.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Sequence
from html import escape
from typing import Any
from urllib.parse import quote

from .history import Sample

__all__ = ["CSS", "JS", "esc", "page"]


def esc(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def q(name: str) -> str:
    """A name as a URL path segment."""
    return quote(name, safe="")


CSS = """
:root { --fg:#1d2330; --muted:#667085; --line:#e4e7ec; --accent:#2e5aac; --bad:#b42318; --ok:#067647; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color:var(--fg);
  background:#f7f8fa; }
header { background:#1d2330; color:#fff; padding:10px 24px; display:flex; align-items:center; gap:24px; }
header a { color:#cfd8ea; text-decoration:none; } header a.on, header a:hover { color:#fff; }
header .brand { font-weight:600; color:#fff; margin-right:12px; }
header .who { margin-left:auto; color:#cfd8ea; }
main { padding:20px 24px; max-width:1280px; }
h1 { font-size:20px; margin:0 0 16px; } h2 { font-size:16px; margin:24px 0 8px; }
table { border-collapse:collapse; width:100%; background:#fff; border:1px solid var(--line); }
th, td { text-align:left; padding:6px 10px; border-bottom:1px solid var(--line); vertical-align:top; }
th { background:#f2f4f7; font-weight:600; } td.n { text-align:right; font-variant-numeric:tabular-nums; }
.cards { display:flex; gap:16px; flex-wrap:wrap; margin-bottom:16px; }
.card { background:#fff; border:1px solid var(--line); padding:12px 16px; min-width:150px; }
.card b { display:block; font-size:22px; } .card span { color:var(--muted); }
.notice { padding:10px 14px; border:1px solid var(--line); background:#fff; margin-bottom:12px; }
.notice.bad { border-color:var(--bad); color:var(--bad); }
.notice.ok { border-color:var(--ok); color:var(--ok); }
form.inline { display:inline; } input, button { font:inherit; padding:4px 8px; }
button { background:var(--accent); color:#fff; border:0; cursor:pointer; }
button.danger { background:var(--bad); }
pre { white-space:pre-wrap; word-break:break-all; margin:0; max-height:240px; overflow:auto; }
.muted { color:var(--muted); } svg.spark { vertical-align:middle; }
"""

#: refreshes the page's <main> every 2 s, but never under someone's hands: not while a field has
#: the focus or holds text not yet sent, checked both before the fetch and again when its answer
#: comes (a fetch started just before the user began typing must not wipe what they typed)
JS = """
(function () {
  var main = document.querySelector("main[data-refresh]");
  if (!main) return;
  function busy() {
    var a = document.activeElement;
    if (a && (a.tagName === "INPUT" || a.tagName === "TEXTAREA" || a.tagName === "SELECT")) return true;
    var fields = main.querySelectorAll("input, textarea");
    for (var i = 0; i < fields.length; i++) {
      if (fields[i].value !== fields[i].defaultValue) return true;
    }
    return false;
  }
  setInterval(function () {
    if (busy()) return;
    fetch(location.href, {headers: {"X-Console-Fragment": "1"}, credentials: "same-origin"})
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (t) { if (t !== null && !busy()) main.innerHTML = t; })
      .catch(function () {});
  }, 2000);
})();
"""

NAV = (("/", "Overview"), ("/queues", "Queues"), ("/connections", "Connections"),
       ("/subscriptions", "Subscriptions"))


def page(title: str, body: str, *, user: str | None, active: str = "", refresh: bool = False,
         signed_in: bool = False) -> str:
    links = "".join(f'<a href="{href}"{" class=on" if href == active else ""}>{name}</a>'
                    for href, name in NAV)
    who = (f'<span class="who">{esc(user)} · <a href="/logout">sign out</a></span>' if signed_in
           else '<span class="who">read-only (no users configured)</span>')
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{esc(title)} · amqp-jms broker"
            f'</title><link rel=stylesheet href="/static/console.css"></head><body>'
            f'<header><span class="brand">amqp-jms broker</span>{links}{who}</header>'
            f'<main{" data-refresh" if refresh else ""}>{body}</main>'
            f'<script src="/static/console.js"></script></body></html>')


def notice(text: str | None, ok: bool = False) -> str:
    if not text:
        return ""
    return f'<div class="notice {"ok" if ok else "bad"}" role="status">{esc(text)}</div>'


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], numeric: Iterable[int] = ()) -> str:
    numeric = set(numeric)
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f'<td{" class=n" if i in numeric else ""}>{c}</td>'
                                    for i, c in enumerate(row)) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def sparkline(values: Sequence[float], width: int = 120, height: int = 24) -> str:
    """A small inline SVG line of ``values`` (the broker's own history: no chart library)."""
    if len(values) < 2:
        return '<span class="muted">–</span>'
    top = max(values) or 1.0
    step = width / (len(values) - 1)
    points = " ".join(f"{i * step:.1f},{height - 2 - (v / top) * (height - 4):.1f}"
                      for i, v in enumerate(values))
    return (f'<svg class="spark" width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
            f'<polyline fill="none" stroke="#2e5aac" stroke-width="1.5" points="{points}"/></svg>')


def rate_series(samples: Sequence[Sample]) -> tuple[list[float], list[float]]:
    ins, outs = [], []
    for a, b in itertools.pairwise(samples):
        dt = (b.at - a.at) or 1.0
        ins.append(max(0.0, (b.enqueued - a.enqueued) / dt))
        outs.append(max(0.0, (b.dequeued - a.dequeued) / dt))
    return ins, outs


def when(ms: int) -> str:
    if not ms:
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms / 1000)) + f".{ms % 1000:03d}"


def csrf_field(token: str) -> str:
    return f'<input type="hidden" name="csrf" value="{esc(token)}">'


def login(error: str | None = None, next_path: str = "/") -> str:
    return ("<h1>Sign in</h1>" + notice(error) +
            '<form method="post" action="/login" class="login">'
            f'<input type="hidden" name="next" value="{esc(next_path)}">'
            '<p><label>User <input name="user" autocomplete="username" autofocus></label></p>'
            '<p><label>Password <input name="password" type="password" autocomplete="current-password">'
            '</label></p><p><button type="submit">Sign in</button></p></form>')


def confirm(action: str, what: str, fields: dict[str, str], csrf: str, back: str) -> str:
    hidden = "".join(f'<input type="hidden" name="{esc(k)}" value="{esc(v)}">' for k, v in fields.items())
    return (f"<h1>Confirm</h1><div class=notice>{esc(what)}</div>"
            f'<form method="post" action="{esc(action)}">{hidden}{csrf_field(csrf)}'
            '<input type="hidden" name="confirmed" value="yes">'
            f'<button type="submit" class="danger">Yes, {esc(what[:1].lower() + what[1:])}</button> '
            f'<a href="{esc(back)}">Cancel</a></form>')
