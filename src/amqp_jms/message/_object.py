"""``ObjectMessage``: a body that is one AMQP-typed value, never a pickle.

Java's ObjectMessage carries a Java-serialized object. In Python the body is any value the AMQP
type system can carry (None, bool, ints with their AMQP width, floats, str, bytes, UUID,
timestamps, symbols, decimals, lists, dicts, described values), so it can travel as an AMQP
``amqp-value`` body that any peer can read. A Java-serialized body received from a Java client
is kept as raw bytes in a ``JavaSerializedObject``; nothing is ever deserialized implicitly
(``JavaSerializedObject.decode`` is the opt-in, allow-listed way).
"""

from __future__ import annotations

import uuid
from typing import Any

from ..exceptions import MessageFormatException
from ..types import Described, jms_type_name
from ._base import Message
from ._data import BodyKind
from ._javaser import JavaSerializedObject

__all__ = ["JavaSerializedObject", "ObjectMessage"]

_SCALARS = (type(None), bool, int, float, str, bytes, uuid.UUID, JavaSerializedObject)
_MAX_DEPTH = 100


def _checked_copy(value: Any, depth: int = 0) -> Any:
    """A copy of ``value`` that shares nothing mutable with it; ``MessageFormatException`` for a
    value AMQP cannot carry (a set, an object, a pickle-only type ...)."""
    if isinstance(value, _SCALARS):
        if isinstance(value, int) and type(value) is int and not -(2**63) <= value < 2**63:
            raise MessageFormatException(f"{value} does not fit an AMQP long (use types.ULong for ulong)")
        return value
    if depth > _MAX_DEPTH:
        raise MessageFormatException(f"ObjectMessage body nested deeper than {_MAX_DEPTH} levels")
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, (list, tuple)):
        return [_checked_copy(item, depth + 1) for item in value]
    if isinstance(value, dict):
        return {_checked_copy(k, depth + 1): _checked_copy(v, depth + 1) for k, v in value.items()}
    if isinstance(value, Described):
        return Described(_checked_copy(value.descriptor, depth + 1), _checked_copy(value.value, depth + 1))
    raise MessageFormatException(
        f"an ObjectMessage body must be a value AMQP can carry (None, bool, int, float, str, "
        f"bytes, UUID, the amqp_jms.types values, list, dict, Described), not {jms_type_name(value)}"
    )


def _copy_out(value: Any) -> Any:
    """Copy mutable containers so a caller cannot change the body through what it was given."""
    if isinstance(value, list):
        return [_copy_out(item) for item in value]
    if isinstance(value, dict):
        return {k: _copy_out(v) for k, v in value.items()}
    if isinstance(value, Described):
        return Described(value.descriptor, _copy_out(value.value))
    return value


class ObjectMessage(Message):
    """A message whose body is one AMQP-typed value (``javax.jms.ObjectMessage``).

    ``ObjectMessage({"id": 7, "tags": ["a", "b"]})``. The value is copied in ``set_object``
    and copied again by ``get_object`` (JMS §3.12: the message keeps its own copy). A tuple is
    stored as a list (AMQP has no tuple).
    """

    __slots__ = ("_object",)
    jms_type = "ObjectMessage"
    _object: Any

    def __init__(self, obj: Any = None) -> None:
        self._init_headers()
        self._object = None
        if obj is not None:
            self.set_object(obj)

    def _init_body(self) -> None:
        self._object = None

    _body_kind = BodyKind.OBJECT

    def _body_snapshot(self) -> Any:
        return _copy_out(self._object)

    def _body_view(self) -> Any:
        return self._object

    def _adopt_received_body(self, body: Any) -> None:
        self._object = body

    def _restore_body(self, body: Any) -> None:
        self._object = _copy_out(body)

    def _has_body(self) -> bool:
        return self._object is not None

    def _body_value(self) -> Any:
        return _copy_out(self._object)

    def set_object(self, obj: Any) -> None:
        self._check_body_writable()
        self._object = _checked_copy(obj)

    def get_object(self) -> Any:
        return _copy_out(self._object)

    def _repr_body(self) -> str:
        if self._object is None:
            return ""
        text = repr(self._object)
        return f"object={text[:100]}{'…' if len(text) > 100 else ''}"
