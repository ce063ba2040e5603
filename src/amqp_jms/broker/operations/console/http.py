"""The console's requests and responses as plain values (no sockets): the HTTP listener parses
bytes into a :class:`Request` and writes a :class:`Response` back; everything in between is
ordinary code that tests call directly."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

__all__ = ["Request", "Response", "html", "redirect"]


@dataclass(frozen=True)
class Request:
    method: str
    target: str
    headers: dict[str, str]  # names lower-cased
    body: bytes = b""
    peer: str = ""
    secure: bool = False

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    @property
    def query(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(urlsplit(self.target).query).items()}

    @property
    def form(self) -> dict[str, str]:
        """A POST's ``application/x-www-form-urlencoded`` fields (the first of each name)."""
        try:
            text = self.body.decode("utf-8")
        except UnicodeDecodeError:
            return {}
        return {k: v[0] for k, v in parse_qs(text, keep_blank_values=True).items()}

    def cookie(self, name: str) -> str | None:
        for part in self.headers.get("cookie", "").split(";"):
            key, _, value = part.strip().partition("=")
            if key == name:
                return value
        return None


@dataclass
class Response:
    status: int
    body: bytes = b""
    content_type: str = "text/html; charset=utf-8"
    headers: list[tuple[str, str]] = field(default_factory=list)


#: every page: no framing by other sites, no sniffing, scripts and styles only from the console
SECURITY_HEADERS = [
    ("X-Frame-Options", "DENY"),
    ("X-Content-Type-Options", "nosniff"),
    ("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'"),
    ("Cache-Control", "no-store"),
    ("Referrer-Policy", "same-origin"),
]


def html(status: int, text: str, headers: list[tuple[str, str]] | None = None) -> Response:
    return Response(status, text.encode("utf-8"), headers=[*SECURITY_HEADERS, *(headers or [])])


def redirect(location: str, headers: list[tuple[str, str]] | None = None) -> Response:
    return Response(303, b"", headers=[("Location", location), *SECURITY_HEADERS, *(headers or [])])
