"""``MapMessage``: named, typed values with the conversions of JMS table 3.7."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..types import Byte, Char, Float, Int, Short
from . import _conversions as cv
from ._base import Message
from ._data import BodyKind

__all__ = ["MapMessage"]


def _check_name(name: object) -> str:
    # MapMessage names are any non-empty String (no identifier rule); Java throws
    # IllegalArgumentException for null or "".
    if type(name) is str and name:
        return name
    if name is None or name == "":
        raise ValueError("a MapMessage item name must not be None or empty")
    raise TypeError(f"a MapMessage item name must be a str, not {type(name).__name__}")


class MapMessage(Message):
    """A message whose body maps ``str`` names to typed values (``javax.jms.MapMessage``).

    ``MapMessage({"a": 1, "b": Byte(2)})`` fills it with ``set_object`` for each item.
    """

    __slots__ = ("_map",)
    jms_type = "MapMessage"
    _map: dict[str, Any]

    def __init__(self, items: Mapping[str, Any] | None = None) -> None:
        self._init_headers()
        self._map = {}
        if items:
            for name, value in items.items():
                self.set_object(name, value)

    def _init_body(self) -> None:
        self._map = {}

    _body_kind = BodyKind.MAP

    def _body_snapshot(self) -> dict[str, Any]:
        return dict(self._map)

    def _body_view(self) -> dict[str, Any]:
        return self._map

    def _adopt_received_body(self, body: Any) -> None:
        self._map = body

    def _restore_body(self, body: Any) -> None:
        self._map = dict(body)

    def _has_body(self) -> bool:
        return bool(self._map)

    def _body_value(self) -> Any:
        return dict(self._map)

    def _set(self, name: str, value: Any) -> None:
        self._check_body_writable()
        self._map[_check_name(name)] = value

    # ------------------------------------------------------------------ setters

    def set_boolean(self, name: str, value: bool) -> None:
        self._set(name, cv.as_boolean(value))

    def set_byte(self, name: str, value: int) -> None:
        self._set(name, cv.as_byte(value))

    def set_short(self, name: str, value: int) -> None:
        self._set(name, cv.as_short(value))

    def set_char(self, name: str, value: str) -> None:
        self._set(name, cv.as_char(value))

    def set_int(self, name: str, value: int) -> None:
        self._set(name, cv.as_int(value))

    def set_long(self, name: str, value: int) -> None:
        self._set(name, cv.as_long(value))

    def set_float(self, name: str, value: float) -> None:
        self._set(name, cv.as_float(value))

    def set_double(self, name: str, value: float) -> None:
        self._set(name, cv.as_double(value))

    def set_string(self, name: str, value: str | None) -> None:
        self._set(name, cv.as_string(value))

    def set_bytes(
        self, name: str, value: bytes | bytearray | memoryview | None, offset: int = 0,
        length: int | None = None,
    ) -> None:
        """Store a copy of ``value[offset:offset+length]`` (``None`` stores a null)."""
        self._set(name, None if value is None else cv.as_bytes(value, offset, length))

    def set_object(self, name: str, value: object) -> None:
        """Store a typed value: ``bool``, ``Byte``, ``Short``, ``Char``, ``Int``, ``int`` (long),
        ``Float``, ``float`` (double), ``str``, bytes-like (copied) or ``None``."""
        self._set(name, cv.as_body_object(value))

    # ------------------------------------------------------------------ getters

    def _get(self, name: str) -> Any:
        if name is None:
            raise ValueError("a MapMessage item name must not be None")
        return self._map.get(name)

    def get_boolean(self, name: str) -> bool:
        return cv.read_as_boolean(self._get(name), ("map item", name))

    def get_byte(self, name: str) -> Byte:
        return cv.read_as_byte(self._get(name), ("map item", name))

    def get_short(self, name: str) -> Short:
        return cv.read_as_short(self._get(name), ("map item", name))

    def get_char(self, name: str) -> Char:
        return cv.read_as_char(self._get(name), ("map item", name))

    def get_int(self, name: str) -> Int:
        return cv.read_as_int(self._get(name), ("map item", name))

    def get_long(self, name: str) -> int:
        return cv.read_as_long(self._get(name), ("map item", name))

    def get_float(self, name: str) -> Float:
        return cv.read_as_float(self._get(name), ("map item", name))

    def get_double(self, name: str) -> float:
        return cv.read_as_double(self._get(name), ("map item", name))

    def get_string(self, name: str) -> str | None:
        return cv.read_as_string(self._get(name), ("map item", name))

    def get_bytes(self, name: str) -> bytes | None:
        return cv.read_as_bytes(self._get(name), ("map item", name))

    def get_object(self, name: str) -> Any:
        """The typed value as stored, or ``None`` if there is no such item."""
        return self._get(name)

    def get_map_names(self) -> list[str]:
        return list(self._map)

    def item_exists(self, name: str) -> bool:
        return name in self._map

    def _repr_body(self) -> str:
        if not self._map:
            return ""
        text = repr(self._map)
        return f"map={text[:120]}{'…' if len(text) > 120 else ''}"
