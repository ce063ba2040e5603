"""The CLI's bridge to the JMS client: open a connection, build messages, describe received ones.

Kept apart from the commands so ``send``/``receive``/``browse``/``bench``/``mq``/``demo`` build and
print messages the same way.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..message._plain import message_body, message_type_name
from ._common import UsageError

__all__ = ["BODY_TYPES", "build_message", "connect", "describe_message", "message_body"]

BODY_TYPES = ("text", "bytes", "map", "stream", "message", "object")
"""``--type`` choices: the JMS message type to send."""


@contextmanager
def connect(url: str, *, client_id: str | None = None) -> Iterator[Any]:
    """A started JMS ``Connection`` to ``url`` (closed on exit)."""
    # looked up at run time: the client is its own component (and the CLI's --help must work
    # without importing it)
    factory = importlib.import_module("amqp_jms").ConnectionFactory(url)
    conn = factory.create_connection()
    try:
        if client_id:
            conn.set_client_id(client_id)
        conn.start()
        yield conn
    finally:
        conn.close()


def build_message(session: Any, kind: str, body: str | bytes | None) -> Any:
    """A message of JMS type ``kind`` with ``body`` (text or raw bytes; JSON for map/stream)."""
    if kind == "text":
        text = body.decode() if isinstance(body, bytes) else body
        return session.create_text_message(text)
    if kind == "bytes":
        msg = session.create_bytes_message()
        if body is not None:
            msg.write_bytes(body if isinstance(body, bytes) else body.encode())
        return msg
    if kind == "message":
        return session.create_message()
    if kind == "object":
        text = body.decode() if isinstance(body, bytes) else body
        return session.create_object_message(json.loads(text) if text else None)
    data: Any = None
    if body is not None:
        try:
            data = json.loads(body)
        except json.JSONDecodeError as e:
            raise UsageError(f"--type {kind} needs a JSON body: {e}") from None
    if kind == "map":
        if not isinstance(data, dict):
            raise UsageError('--type map needs a JSON object body, e.g. \'{"sku": "A1", "qty": 2}\'')
        msg = session.create_map_message()
        for k, v in data.items():
            msg.set_object(str(k), v)
        return msg
    if kind == "stream":
        if not isinstance(data, list):
            raise UsageError("--type stream needs a JSON array body, e.g. '[1, \"two\", 3.0]'")
        msg = session.create_stream_message()
        for v in data:
            msg.write_object(v)
        return msg
    raise UsageError(f"unknown --type {kind!r}; expected one of {', '.join(BODY_TYPES)}")


def describe_message(msg: Any) -> dict[str, Any]:
    """Headers, properties and body of a received message, as a dict (JSON-ready via to_jsonable)."""
    dest = msg.get_jms_destination()
    reply = msg.get_jms_reply_to()
    return {
        "type": message_type_name(msg),
        "message_id": msg.get_jms_message_id(),
        "destination": str(dest) if dest is not None else None,
        "correlation_id": msg.get_jms_correlation_id(),
        "reply_to": str(reply) if reply is not None else None,
        "jms_type": msg.get_jms_type(),
        "priority": msg.get_jms_priority(),
        "delivery_mode": "PERSISTENT" if msg.get_jms_delivery_mode() == 2 else "NON_PERSISTENT",
        "timestamp": msg.get_jms_timestamp(),
        "expiration": msg.get_jms_expiration(),
        "redelivered": msg.get_jms_redelivered(),
        "properties": {n: msg.get_object_property(n) for n in msg.get_property_names()},
        "body": message_body(msg),
    }
