"""``JavaSerializedObject``: the raw bytes of a Java-serialized ObjectMessage body.

A Java client's ObjectMessage arrives with content type ``application/x-java-serialized-object``
and a Java serialization stream as its body. We never deserialize it implicitly: the mapping
wraps the bytes in a ``JavaSerializedObject``, and the application may call ``decode(allow=...)``
to read the common cases into Python values. The decoder is deliberately minimal. It parses the
stream format (Java Object Serialization Specification, chapter 6) without running anything, and
rebuilds only:

* ``java.lang.String`` -> ``str``; ``Boolean`` -> ``bool``; ``Byte``/``Short``/``Integer`` ->
  ``Byte``/``Short``/``Int``; ``Long`` -> ``int``; ``Float`` -> ``Float``; ``Double`` -> ``float``;
  ``Character`` -> ``Char``
* arrays: ``byte[]`` -> ``bytes``, other primitive and object arrays -> ``list``
* ``java.util.ArrayList``/``LinkedList`` -> ``list``; ``java.util.HashMap``/``LinkedHashMap``/
  ``TreeMap``/``Hashtable`` -> ``dict``

Every class named in the stream (superclasses included) must be allowed: an ``allow`` entry is a
class name (``java.lang.Integer``) or a package (``java.lang``, meaning classes directly in it),
or ``"*"``. Strings and arrays of primitives name no class and need no entry.
Anything not allowed, or allowed but not one of the classes above, is a
``MessageFormatException`` naming the class; nothing is guessed.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Any

from ..exceptions import MessageFormatException
from ..types import Byte, Char, Float, Int, Short
from ._mutf8 import decode_modified_utf8

__all__ = ["CONTENT_TYPE", "JavaSerializedObject"]

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

    def decode(self, *, allow: Iterable[str]) -> Any:
        """Rebuild the object if every class in it is allowed and known (see the module doc).

        ``allow`` is required: e.g. ``allow=["java.lang", "java.util.HashMap"]``.
        ``MessageFormatException`` for a class not allowed, not supported, or a malformed stream.
        """
        if isinstance(allow, str):
            allow = [allow]
        return _Reader(self._data, frozenset(allow)).read_stream()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, JavaSerializedObject):
            return NotImplemented
        return self._data == other._data

    def __hash__(self) -> int:
        return hash((JavaSerializedObject, self._data))

    def __repr__(self) -> str:
        return f"JavaSerializedObject({len(self._data)} bytes)"


# Stream constants (java.io.ObjectStreamConstants).
_MAGIC = b"\xac\xed\x00\x05"
TC_NULL, TC_REFERENCE, TC_CLASSDESC, TC_OBJECT, TC_STRING, TC_ARRAY = 0x70, 0x71, 0x72, 0x73, 0x74, 0x75
TC_CLASS, TC_BLOCKDATA, TC_ENDBLOCKDATA, TC_RESET, TC_BLOCKDATALONG = 0x76, 0x77, 0x78, 0x79, 0x7A
TC_LONGSTRING, TC_PROXYCLASSDESC, TC_ENUM = 0x7C, 0x7D, 0x7E
_BASE_HANDLE = 0x7E0000
SC_WRITE_METHOD, SC_SERIALIZABLE, SC_EXTERNALIZABLE = 0x01, 0x02, 0x04

_PRIMITIVES: dict[str, tuple[struct.Struct, Any]] = {
    "B": (struct.Struct(">b"), lambda v: int.__new__(Byte, v)),
    "C": (struct.Struct(">H"), lambda v: str.__new__(Char, chr(v))),
    "D": (struct.Struct(">d"), float),
    "F": (struct.Struct(">f"), lambda v: float.__new__(Float, v)),
    "I": (struct.Struct(">i"), lambda v: int.__new__(Int, v)),
    "J": (struct.Struct(">q"), int),
    "S": (struct.Struct(">h"), lambda v: int.__new__(Short, v)),
    "Z": (struct.Struct(">?"), bool),
}
_BOXES = {
    "java.lang.Boolean", "java.lang.Byte", "java.lang.Short", "java.lang.Integer", "java.lang.Long",
    "java.lang.Float", "java.lang.Double", "java.lang.Character",
}
_LISTS = {"java.util.ArrayList", "java.util.LinkedList"}
_MAPS = {"java.util.HashMap", "java.util.LinkedHashMap", "java.util.TreeMap", "java.util.Hashtable"}
# Superclasses that carry no state of their own and may appear in allowed objects' hierarchies.
_STATELESS_SUPERS = {"java.lang.Number", "java.util.AbstractMap", "java.util.AbstractList"}
_MAX_DEPTH = 200


class _Block(bytes):
    """Block data written by a class's writeObject (told apart from a byte[] element)."""

    __slots__ = ()


class _ClassDesc:
    __slots__ = ("fields", "flags", "name", "super")

    def __init__(self, name: str, flags: int, fields: list[tuple[str, str]], sup: _ClassDesc | None):
        self.name = name
        self.flags = flags
        self.fields = fields
        self.super = sup


class _Reader:
    def __init__(self, data: bytes, allow: frozenset[str]) -> None:
        self.data = data
        self.pos = 0
        self.allow = allow
        self.handles: list[Any] = []
        self.depth = 0

    # -- primitives

    def fail(self, why: str) -> MessageFormatException:
        return MessageFormatException(f"Java-serialized body at byte {self.pos}: {why}")

    def take(self, size: int) -> bytes:
        end = self.pos + size
        if end > len(self.data):
            raise self.fail("unexpected end of the stream")
        chunk = self.data[self.pos : end]
        self.pos = end
        return chunk

    def u8(self) -> int:
        return self.take(1)[0]

    def u16(self) -> int:
        return int.from_bytes(self.take(2), "big")

    def i32(self) -> int:
        return int.from_bytes(self.take(4), "big", signed=True)

    def utf(self, long: bool = False) -> str:
        size = int.from_bytes(self.take(8), "big") if long else self.u16()
        try:
            return decode_modified_utf8(self.take(size))
        except ValueError as exc:
            raise self.fail(str(exc)) from None

    # -- checks

    def check_allowed(self, name: str) -> None:
        if name.startswith("["):
            element = name.lstrip("[")
            if len(element) == 1 and element in _PRIMITIVES:
                return  # an array of primitives has no class to allow
            name = element[1:-1] if element.startswith("L") else element
        package = name.rpartition(".")[0]
        if "*" not in self.allow and name not in self.allow and package not in self.allow:
            raise MessageFormatException(f"Java class {name} is not in the allow-list {sorted(self.allow)}")

    # -- grammar

    def read_stream(self) -> Any:
        if self.take(4) != _MAGIC:
            raise MessageFormatException("not a Java serialization stream (no AC ED 00 05 header)")
        value = self.content()
        if self.pos != len(self.data):
            raise self.fail("trailing data after the object")
        return value

    def content(self) -> Any:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise self.fail("objects nested too deeply")
        try:
            tc = self.u8()
            if tc == TC_NULL:
                return None
            if tc == TC_REFERENCE:
                index = self.i32() - _BASE_HANDLE
                if not 0 <= index < len(self.handles):
                    raise self.fail("reference to an unknown handle")
                return self.handles[index]
            if tc in (TC_STRING, TC_LONGSTRING):
                text = self.utf(long=tc == TC_LONGSTRING)
                self.handles.append(text)
                return text
            if tc == TC_ARRAY:
                return self.array()
            if tc == TC_OBJECT:
                return self.object()
            if tc == TC_RESET:
                self.handles.clear()
                return self.content()
            names = {TC_CLASS: "a Class object", TC_ENUM: "an enum constant",
                     TC_PROXYCLASSDESC: "a proxy class"}
            raise self.fail(f"{names.get(tc, f'type code 0x{tc:02X}')} is not supported")
        finally:
            self.depth -= 1

    def class_desc(self) -> _ClassDesc | None:
        tc = self.u8()
        if tc == TC_NULL:
            return None
        if tc == TC_REFERENCE:
            index = self.i32() - _BASE_HANDLE
            if not 0 <= index < len(self.handles) or not isinstance(self.handles[index], _ClassDesc):
                raise self.fail("reference to an unknown class descriptor")
            desc: _ClassDesc = self.handles[index]
            return desc
        if tc != TC_CLASSDESC:
            raise self.fail(f"expected a class descriptor, found type code 0x{tc:02X}")
        name = self.utf()
        self.check_allowed(name)
        self.take(8)  # serialVersionUID
        desc = _ClassDesc(name, 0, [], None)
        self.handles.append(desc)
        desc.flags = self.u8()
        for _ in range(self.u16()):
            code = chr(self.u8())
            field = self.utf()
            if code in "[L":
                class_name = self.content()
                if not isinstance(class_name, str):
                    raise self.fail("a field's class name is not a string")
                code = class_name if code == "[" else "L"
            elif code not in _PRIMITIVES:
                raise self.fail(f"unknown field type code {code!r}")
            desc.fields.append((field, code))
        self.annotation()  # class annotation: nothing we use
        desc.super = self.class_desc()
        return desc

    def annotation(self) -> list[Any]:
        """Block data and objects up to TC_ENDBLOCKDATA (what a writeObject method wrote)."""
        items: list[Any] = []
        while True:
            tc = self.data[self.pos] if self.pos < len(self.data) else None
            if tc is None:
                raise self.fail("unexpected end of the stream in block data")
            if tc == TC_ENDBLOCKDATA:
                self.pos += 1
                return items
            if tc == TC_BLOCKDATA:
                self.pos += 1
                items.append(_Block(self.take(self.u8())))
            elif tc == TC_BLOCKDATALONG:
                self.pos += 1
                items.append(_Block(self.take(self.i32())))
            else:
                items.append(self.content())

    def field_values(self, desc: _ClassDesc) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for name, code in desc.fields:
            primitive = _PRIMITIVES.get(code)
            if primitive is not None:
                fmt, make = primitive
                values[name] = make(fmt.unpack(self.take(fmt.size))[0])
            else:
                values[name] = self.content()
        return values

    def array(self) -> Any:
        desc = self.class_desc()
        if desc is None:
            raise self.fail("array without a class")
        element = desc.name[1:]
        size = self.i32()
        if size < 0 or size > len(self.data):
            raise self.fail(f"impossible array length {size}")
        if element == "B":
            value: Any = self.take(size)
            self.handles.append(value)
            return value
        items: list[Any] = []
        self.handles.append(items)
        primitive = _PRIMITIVES.get(element)
        for _ in range(size):
            if primitive is not None:
                fmt, make = primitive
                items.append(make(fmt.unpack(self.take(fmt.size))[0]))
            else:
                items.append(self.content())
        return items

    def object(self) -> Any:
        desc = self.class_desc()
        if desc is None:
            raise self.fail("object without a class")
        if desc.flags & SC_EXTERNALIZABLE:
            raise MessageFormatException(f"Java class {desc.name} is Externalizable: not supported")
        name = desc.name
        if name not in _BOXES and name not in _LISTS and name not in _MAPS:
            raise MessageFormatException(
                f"Java class {name} is not one the minimal decoder rebuilds (strings, boxed "
                "primitives, arrays, ArrayList/LinkedList, HashMap/LinkedHashMap/TreeMap/Hashtable)"
            )
        slot = len(self.handles)
        self.handles.append(None)  # placeholder so references inside resolve to the right handle
        chain: list[_ClassDesc] = []
        cls: _ClassDesc | None = desc
        while cls is not None:
            chain.append(cls)
            cls = cls.super
        fields: dict[str, Any] = {}
        annotations: list[Any] = []
        for cls in reversed(chain):  # superclass data first
            if cls is not desc and cls.name not in _STATELESS_SUPERS and cls.name not in _MAPS | _LISTS:
                raise MessageFormatException(f"Java class {name} extends {cls.name}: not supported")
            fields.update(self.field_values(cls))
            if cls.flags & SC_WRITE_METHOD:
                annotations.extend(self.annotation())
        value = self.rebuild(name, fields, annotations)
        self.handles[slot] = value
        return value

    def rebuild(self, name: str, fields: dict[str, Any], annotations: list[Any]) -> Any:
        if name in _BOXES:
            if "value" not in fields:
                raise self.fail(f"{name} without a value field")
            return fields["value"]
        objects = [item for item in annotations if not isinstance(item, _Block)]
        if name in _LISTS:
            return objects
        if len(objects) % 2:
            raise self.fail(f"{name} with an odd number of keys and values")
        try:
            return dict(zip(objects[::2], objects[1::2]))
        except TypeError:
            raise self.fail(f"{name} has a key Python cannot hash (a list or map)") from None
