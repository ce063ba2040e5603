"""A received message's body as a plain Python value, whatever its JMS type.

JMS's ``get_body(cls)`` refuses a StreamMessage and needs the caller to know the type; the
command line (printing, ``--json``) and AMQP Management (reading a reply's map) want the value
itself.
"""

from __future__ import annotations

from typing import Any

from ..exceptions import MessageEOFException

__all__ = ["message_body", "message_type_name"]


def message_type_name(msg: Any) -> str:
    """The JMS interface a message implements (``TextMessage`` ...), ``Message`` for a plain one."""
    for cls in type(msg).__mro__:
        if cls.__name__ in ("TextMessage", "BytesMessage", "MapMessage", "StreamMessage", "ObjectMessage"):
            return cls.__name__
    return "Message"


def message_body(msg: Any) -> Any:
    """The body as a plain value: str, bytes, dict, list, an object, or None."""
    kind = message_type_name(msg)
    if kind == "TextMessage":
        return msg.get_text()
    if kind == "MapMessage":
        return {name: msg.get_object(name) for name in msg.get_map_names()}
    if kind == "StreamMessage":
        msg.reset()
        items = []
        while True:
            try:
                items.append(msg.read_object())
            except MessageEOFException:
                break
        return items
    if kind == "BytesMessage":
        return msg.get_body(bytes)
    if kind == "ObjectMessage":
        return msg.get_object()
    return None
