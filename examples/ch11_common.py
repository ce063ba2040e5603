"""Shared plumbing of the chapter 11 examples (JMS 2.0 section 11.4), not an example itself.

Each ``ch11_4_*.py`` script ports one example of the spec in both forms, the standard API
("old") and the simplified API ("new"); the Java EE and Java SE variants differ only in how the
``ConnectionFactory`` and destinations are obtained (JNDI or injection), which in Python is a
plain argument. ``run(demo)`` gives each script a command line: ``--url`` for a broker, or none
to start the embedded one.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["MyListener", "run"]


class MyListener:
    """The spec's ``MyListener``: remembers the text of each message it gets."""

    def __init__(self, name: str = "", expect: int = 1) -> None:
        self.name = name
        self.texts: list[str] = []
        self._expect = expect
        self._lock = threading.Lock()
        self.done = threading.Event()

    def on_message(self, message: Any) -> None:
        with self._lock:
            self.texts.append(str(message.get_body(str)))
            if len(self.texts) >= self._expect:
                self.done.set()


def run(demo: Callable[[str], Any]) -> int:
    ap = argparse.ArgumentParser(description=(demo.__doc__ or "").strip().splitlines()[0])
    ap.add_argument("--url", help="broker URL (default: start an embedded broker)")
    args = ap.parse_args()
    if args.url:
        print(demo(args.url))
        return 0
    from amqp_jms.broker import Broker

    with Broker(port=0) as broker:
        print(demo(broker.url))
    return 0


if __name__ == "__main__":
    sys.exit("ch11_common is a helper: run one of the ch11_4_*.py examples")
