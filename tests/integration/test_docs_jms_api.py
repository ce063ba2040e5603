"""docs/jms-api.md cannot rot: every ```python block on it runs against an embedded broker.

The convention (also stated in an HTML comment at the top of the page): blocks run in page
order; the blocks of one ``## `` section share a namespace, sections share nothing; the test
defines ``url`` (a fresh embedded broker per section) and nothing else; every block asserts or
prints; and a section leaves no connection open behind it (no I/O thread survives it).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "jms-api.md"
_FENCE = re.compile(r"^```(\w*)\s*$")


def sections(text: str) -> list[tuple[str, list[tuple[int, str]]]]:
    """``[(section title, [(line number, python source), ...]), ...]`` in page order.

    Text before the first ``## `` heading is the section ``"(intro)"``. Only blocks fenced
    exactly ```` ```python ```` are collected; an unterminated block is an error."""
    out: list[tuple[str, list[tuple[int, str]]]] = [("(intro)", [])]
    lang: str | None = None
    start = 0
    current: list[str] = []
    for n, line in enumerate(text.splitlines(), 1):
        m = _FENCE.match(line)
        if lang is None:
            if line.startswith("## "):
                out.append((line[3:].strip(), []))
            elif m:
                lang, start, current = m.group(1), n + 1, []
        elif m and not m.group(1):
            if lang == "python":
                out[-1][1].append((start, "\n".join(current) + "\n"))
            lang = None
        else:
            current.append(line)
    if lang is not None:
        raise AssertionError(f"docs/jms-api.md: the block opened at line {start - 1} is never closed")
    return [(title, blocks) for title, blocks in out if blocks]


SECTIONS = sections(DOC.read_text())


def _io_threads() -> set[threading.Thread]:
    """Client threads that only an open connection/session keeps alive (not the broker's)."""
    return {t for t in threading.enumerate()
            if t.name.startswith("amqp-jms") and "broker" not in t.name and t.is_alive()}


def _wait_until(pred: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_the_page_has_the_sections_the_guide_promises() -> None:
    titles = [t for t, _ in SECTIONS]
    for needed in ("Connecting", "Messages and typed properties", "Producers", "Consumers",
                   "Acknowledgement", "Transactions", "Durable and shared subscriptions",
                   "Temporary destinations and request/reply", "Browsing a queue",
                   "JMSContext: the simplified API", "asyncio", "Errors", "Threads",
                   "What differs from Java JMS"):
        assert needed in titles, f"docs/jms-api.md has no runnable '## {needed}' section"
    text = DOC.read_text()
    assert text.lstrip().startswith("<!--"), "the page must open with the HTML comment stating the convention"
    assert "with Broker(port=0) as broker:" in text, "the page must show where `url` comes from"


@pytest.mark.parametrize("blocks", [b for _, b in SECTIONS], ids=[t for t, _ in SECTIONS])
def test_section_runs(blocks: list[tuple[int, str]], broker_factory: Callable[..., Any],
                      capsys: pytest.CaptureFixture[str]) -> None:
    """Run one section's blocks in order in one namespace, with ``url`` pointing at a fresh broker."""
    broker = broker_factory()
    before = _io_threads()
    namespace: dict[str, Any] = {"__name__": "__jms_api_doc__", "url": broker.url}
    for line, source in blocks:
        assert re.search(r"^\s*(assert\b|print\()", source, re.M), (
            f"docs/jms-api.md line {line}: a block must assert or print something")
        code = compile("\n" * (line - 1) + source, str(DOC), "exec")  # tracebacks show page lines
        capsys.readouterr()
        exec(code, namespace)
        out = capsys.readouterr().out
        if "print(" in source:
            assert out.strip(), f"docs/jms-api.md line {line}: the block prints nothing"
    clean = _wait_until(lambda: not (_io_threads() - before), 10.0)
    assert clean, f"the section left client threads running: {sorted(t.name for t in _io_threads() - before)}"
