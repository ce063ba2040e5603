"""``JavaSerializedObject``: the raw bytes of a Java-serialized ObjectMessage body."""

from __future__ import annotations

__all__ = ["JavaSerializedObject"]

#: The content type of a Java-serialized ObjectMessage body (OASIS AMQP JMS mapping).
CONTENT_TYPE = "application/x-java-serialized-object"


class JavaSerializedObject:
    """A Java-serialized object, kept as bytes and never deserialized implicitly."""

    __slots__ = ("_data",)

    def __init__(self, data: bytes | bytearray | memoryview) -> None:
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"JavaSerializedObject needs bytes, not {type(data).__name__}")
        self._data = bytes(data)

    @property
    def data(self) -> bytes:
        """The serialized stream, as received (starts with ``AC ED 00 05``)."""
        return self._data

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, JavaSerializedObject):
            return NotImplemented
        return self._data == other._data

    def __hash__(self) -> int:
        return hash((JavaSerializedObject, self._data))

    def __repr__(self) -> str:
        return f"JavaSerializedObject({len(self._data)} bytes)"
