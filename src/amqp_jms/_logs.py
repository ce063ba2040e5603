"""The library's loggers: one per layer, and the ids every line about a resource carries.

Python's convention for a library: log to named loggers and install no handler (the
application decides where lines go; ``logging.lastResort`` shows WARNING and above on stderr
when it has configured nothing). The names are the layers of ``docs/architecture.md``, so an
operator turns one layer up without the rest::

    logging.getLogger("amqp_jms.provider").setLevel(logging.DEBUG)
    logging.getLogger("amqp_jms.frames").setLevel(logging.DEBUG)   # with amqp.traceFrames=true

Levels: WARNING for what an operator must hear of (a connection failed, a reconnect, a
message skipped as unreadable), one line each with the reason; INFO only for rare lifecycle
events; DEBUG for the rest. Lines about a connection, session or link go through ``with_ids``,
which puts the ids in front of the message and in ``extra`` (``record.amqp_ids`` and one
attribute per id, e.g. ``record.connection_id``) for handlers that format or filter by them.

A leaf module: every layer imports it, it imports nothing of the package.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, MutableMapping
from typing import Any

__all__ = [
    "BROKER",
    "CLIENT",
    "FRAMES",
    "LAYERS",
    "MQ",
    "PROVIDER",
    "SPARK",
    "IdsAdapter",
    "with_ids",
]

#: the JMS objects (connection, session, producer, consumer, listeners)
CLIENT = logging.getLogger("amqp_jms.client")
#: the AMQP provider: the connection's I/O thread, failures and reconnects
PROVIDER = logging.getLogger("amqp_jms.provider")
#: every AMQP frame in and out, decoded, when ``amqp.traceFrames=true`` (DEBUG only)
FRAMES = logging.getLogger("amqp_jms.frames")
#: the embedded broker
BROKER = logging.getLogger("amqp_jms.broker")
#: the PySpark data source
SPARK = logging.getLogger("amqp_jms.spark")
#: the IBM MQ mapping and bridge
MQ = logging.getLogger("amqp_jms.mq")
#: every logger the library writes to
LAYERS: tuple[logging.Logger, ...] = (CLIENT, PROVIDER, FRAMES, BROKER, SPARK, MQ)


class IdsAdapter(logging.LoggerAdapter[logging.Logger]):
    """A logger whose every line names the resource it is about: ``[connection=ID:...:1] ...``.

    The ids also travel in ``extra``: ``record.amqp_ids`` (the dict) and one attribute per id
    (``record.connection_id``, ``record.session_id``, ``record.link``)."""

    def __init__(self, logger: logging.Logger, ids: Mapping[str, object]) -> None:
        super().__init__(logger, {f"{k}_id" if k != "link" else k: v for k, v in ids.items()})
        self.ids = dict(ids)
        self.prefix = "[" + " ".join(f"{k}={v}" for k, v in ids.items()) + "] "

    def process(self, msg: Any, kwargs: MutableMapping[str, Any]) -> tuple[Any, MutableMapping[str, Any]]:
        extra = dict(self.extra or {})
        extra["amqp_ids"] = self.ids
        given = kwargs.get("extra")
        if given:
            extra.update(given)
        kwargs["extra"] = extra
        return self.prefix + str(msg), kwargs


def with_ids(logger: logging.Logger, **ids: object) -> IdsAdapter:
    """``logger`` with ``ids`` (``connection=...``, ``session=...``, ``link=...``) on every line."""
    return IdsAdapter(logger, ids)
