"""Helpers for the console tests (no tests here): the users and permissions they sign in with,
and a browser-like HTTP client.

root manages everything; bob may browse ``orders.#`` (a read-only role); the DLQ needs manage.
"""

from __future__ import annotations

import http.cookiejar
import re
import ssl
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from amqp_jms.broker.routing.authorization import Authorization

USERS = {"root": "r-pw", "bob": "b-pw"}
RULES = Authorization.build(
    {"root": ["admins"], "bob": ["readers"]},
    [
        ("#", {"send": ["admins"], "consume": ["admins"], "browse": ["admins"], "manage": ["admins"],
               "create_temporary": ["admins"]}),
        ("orders.#", {"send": ["admins"], "consume": ["admins"], "browse": ["readers", "admins"],
                      "manage": ["admins"]}),
    ],
)


class Client:
    """A browser-like HTTP client: cookies kept, redirects followed, any status returned."""

    def __init__(self, base: str, context: ssl.SSLContext | None = None) -> None:
        self.base = base.rstrip("/")
        self.jar = http.cookiejar.CookieJar()
        handlers: list[Any] = [urllib.request.HTTPCookieProcessor(self.jar)]
        if context is not None:
            handlers.append(urllib.request.HTTPSHandler(context=context))
        self.opener = urllib.request.build_opener(*handlers)

    def get(self, path: str) -> tuple[int, str]:
        return self._open(urllib.request.Request(self.base + path))

    def post(self, path: str, fields: dict[str, str]) -> tuple[int, str]:
        data = urllib.parse.urlencode(fields).encode()
        return self._open(urllib.request.Request(self.base + path, data=data, method="POST"))

    def _open(self, req: urllib.request.Request) -> tuple[int, str]:
        try:
            with self.opener.open(req, timeout=10) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def login(self, user: str) -> None:
        status, body = self.post("/login", {"user": user, "password": USERS[user], "next": "/"})
        assert status == 200 and "Overview" in body, body

    def csrf(self, path: str) -> str:
        status, body = self.get(path)
        assert status == 200, body
        m = re.search(r'name="csrf" value="([^"]+)"', body)
        assert m, "no form with a CSRF token on " + path
        return m.group(1)
