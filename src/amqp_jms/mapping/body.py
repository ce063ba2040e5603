"""Message bodies (3.2.4 out, 3.3.7 in): which sections carry which JMS body, and which JMS
message class a received AMQP message becomes.

Sent: Message -> ``amqp-value`` null; TextMessage -> ``amqp-value`` string/null; BytesMessage ->
one ``data`` section, content-type ``application/octet-stream``; MapMessage -> ``amqp-value``
map; StreamMessage -> one ``amqp-sequence``; ObjectMessage -> ``amqp-value`` of the AMQP-typed
object (a ``JavaSerializedObject`` goes as ``data`` with content-type
``application/x-java-serialized-object``). Each with its ``x-opt-jms-msg-type`` byte.

Received: the ``x-opt-jms-msg-type`` annotation decides when present (an invalid value is a
``MessageFormatException``); otherwise the sections and the content-type do, as wd06 3.3.7 says,
with the early draft's rules for a message with no body.
"""

from __future__ import annotations

import codecs
from typing import Any

from ..exceptions import MessageFormatException
from ..message import (
    BytesMessage,
    JavaSerializedObject,
    MapMessage,
    Message,
    ObjectMessage,
    StreamMessage,
    TextMessage,
)
from ..message._data import BodyKind
from ..message._mutf8 import decode_java_utf8
from ..types import Byte, Symbol
from .codec import AMQP_SEQUENCE, AMQP_VALUE, DATA, Sections
from .codec._encode import encode_str, encode_value

__all__ = [
    "JAVA_SERIALIZED",
    "MSG_TYPE",
    "OCTET_STREAM",
    "body_of",
    "encode_body",
    "headers_only_body",
    "parse_content_type",
]

MSG_TYPE = Symbol("x-opt-jms-msg-type")
OCTET_STREAM = Symbol("application/octet-stream")
JAVA_SERIALIZED = Symbol("application/x-java-serialized-object")

MESSAGE, OBJECT, MAP, BYTES, STREAM, TEXT = range(6)
_CLASSES: dict[int, type[Message]] = {
    MESSAGE: Message,
    OBJECT: ObjectMessage,
    MAP: MapMessage,
    BYTES: BytesMessage,
    STREAM: StreamMessage,
    TEXT: TextMessage,
}
TYPE_BYTES = {code: Byte(code) for code in _CLASSES}

_VALUE = b"\x00\x53\x77"
_DATA = b"\x00\x53\x75"
_SEQUENCE = b"\x00\x53\x76"
_NULL_VALUE = _VALUE + b"\x40"


def encode_body(code: int, body: Any) -> tuple[bytes, Symbol | None]:
    """``(body sections, default content-type)`` for a ``MessageData``'s kind and body."""
    if code == TEXT:
        return (_NULL_VALUE if body is None else _VALUE + encode_str(body)), None
    if code == BYTES:
        return _DATA + encode_value(body), OCTET_STREAM
    if code == MAP:
        return _VALUE + encode_value(body), None
    if code == STREAM:
        return _SEQUENCE + encode_value(body), None
    if code == OBJECT:
        obj = body
        if isinstance(obj, JavaSerializedObject):
            return _DATA + encode_value(obj.data), JAVA_SERIALIZED
        return _VALUE + encode_value(obj), None
    return _NULL_VALUE, None


# -- receiving ---------------------------------------------------------------------------------

_STR = frozenset({str})
_TEXTUAL_APPLICATION = frozenset({"xml", "xml-dtd", "json", "javascript", "ecmascript"})


def parse_content_type(content_type: str) -> tuple[str, str | None]:
    """``("type/subtype" lower-cased, charset or None)``."""
    mime, _, params = content_type.partition(";")
    charset = None
    if params:
        for param in params.split(";"):
            name, _, value = param.partition("=")
            if name.strip().lower() == "charset":
                charset = value.strip().strip('"').strip() or None
    return mime.strip().lower(), charset


def _is_textual(mime: str) -> bool:
    top, _, sub = mime.partition("/")
    if top == "text":
        return True
    if top == "application":
        return sub in _TEXTUAL_APPLICATION or sub.endswith("+xml") or sub.endswith("+json")
    return False


def _text_codec(charset: str | None) -> str | None:
    """The Python codec for a charset, ``None`` if Python has none by that name."""
    if charset is None:
        return "utf-8"
    try:
        info = codecs.lookup(charset)
    except (LookupError, ValueError):  # unknown, or not even a codec name ("\x00")
        return None
    # bytes-to-bytes and str-to-str codecs (base64, rot13 ...) are no charsets
    return info.name if getattr(info, "_is_text_encoding", True) else None


def _decode_text(data: bytes, codec: str) -> str:
    try:
        return data.decode(codec)
    except UnicodeDecodeError as e:
        if codec != "utf-8":
            raise MessageFormatException(
                f"text body is not valid {codec}: {e.reason} at byte {e.start}"
            ) from None
        try:  # a Java peer's CESU-8 / modified UTF-8
            return decode_java_utf8(data)
        except ValueError as e2:
            raise MessageFormatException(f"text body is not valid utf-8: {e2}") from None
    except LookupError:
        raise MessageFormatException(f"text body charset {codec!r} is not a text encoding") from None
    except (UnicodeError, ValueError, TypeError) as e:  # codecs such as punycode raise these
        raise MessageFormatException(f"text body is not valid {codec}: {e}") from None


def _joined(body: Any, kind: int | None) -> bytes:
    if kind == DATA:
        return body[0] if len(body) == 1 else b"".join(body)
    return b""


def _infer(s: Sections, content_type: str | None) -> tuple[int, str | None]:
    """JMS type code (and text codec) for a message without ``x-opt-jms-msg-type``."""
    kind = s.body_type
    if kind == AMQP_VALUE:
        v = s.body
        if v is None or type(v) is str:
            return TEXT, None
        if type(v) is bytes:
            return BYTES, None
        return OBJECT, None
    if kind == AMQP_SEQUENCE:
        return OBJECT, None
    # data sections, or no body at all (the early draft's rules)
    if content_type is None:
        return BYTES, None
    mime, charset = parse_content_type(content_type)
    if mime == JAVA_SERIALIZED:
        return OBJECT, None
    if _is_textual(mime):
        codec = _text_codec(charset)
        if codec is not None:
            return TEXT, codec
    return BYTES, None


def _wrong(code: int, s: Sections) -> MessageFormatException:
    what = type(s.body).__name__ if s.body_type == AMQP_VALUE else "data/sequence sections"
    return MessageFormatException(
        f"x-opt-jms-msg-type {code} ({_CLASSES[code].__name__}) does not fit a body of {what}"
    )


def _annotated_type(annotations: dict[Any, Any] | None) -> Any:
    """The ``x-opt-jms-msg-type`` code (None when absent); an invalid one is refused."""
    code = annotations.get(MSG_TYPE) if annotations else None
    if code is not None and (type(code) is bool or not isinstance(code, int) or code not in _CLASSES):
        raise MessageFormatException(f"invalid x-opt-jms-msg-type {code!r}: expected a byte from 0 to 5")
    return code


def headers_only_body(annotations: dict[Any, Any] | None) -> tuple[BodyKind, Any]:
    """The (kind, body) of a message whose body is not decoded (``decode(..., body=False)``):
    a plain Message carries its headers and properties; its body-type annotation is vetted,
    its body is not read."""
    _annotated_type(annotations)
    return BodyKind.MESSAGE, None


def body_of(s: Sections, annotations: dict[Any, Any] | None) -> tuple[BodyKind, Any]:
    """The JMS message type of ``s`` and its body as ``MessageData.body`` holds it."""
    props = s.properties
    content_type = props.content_type if props is not None else None
    code = _annotated_type(annotations)
    codec: str | None = "utf-8"
    if code is None:
        code, codec = _infer(s, content_type)
    elif code == TEXT and content_type is not None:
        codec = _text_codec(parse_content_type(content_type)[1]) or "utf-8"
    kind = s.body_type
    body = s.body
    if code == TEXT:
        if kind == AMQP_VALUE:
            if body is not None and type(body) is not str:
                raise _wrong(code, s)
            return BodyKind.TEXT, body
        if kind == DATA:
            return BodyKind.TEXT, _decode_text(_joined(body, kind), codec or "utf-8")
        if kind is not None:
            raise _wrong(code, s)
        return BodyKind.TEXT, None
    if code == BYTES:
        if kind == DATA:
            return BodyKind.BYTES, _joined(body, kind)
        if kind == AMQP_VALUE:
            if type(body) is bytes:
                return BodyKind.BYTES, body
            if body is not None:
                raise _wrong(code, s)
        elif kind is not None:
            raise _wrong(code, s)
        return BodyKind.BYTES, b""
    if code == MAP:
        if kind == AMQP_VALUE and type(body) is dict:
            if not _STR.issuperset(map(type, body)):
                k = next(k for k in body if type(k) is not str)
                raise MessageFormatException(f"MapMessage body has a key {k!r:.40} that is not a string")
            return BodyKind.MAP, body
        if not (kind is None or (kind == AMQP_VALUE and body is None)):
            raise _wrong(code, s)
        return BodyKind.MAP, {}
    if code == STREAM:
        if kind == AMQP_SEQUENCE:
            return BodyKind.STREAM, body[0] if len(body) == 1 else [x for part in body for x in part]
        if kind == AMQP_VALUE and type(body) is list:
            return BodyKind.STREAM, body
        if not (kind is None or (kind == AMQP_VALUE and body is None)):
            raise _wrong(code, s)
        return BodyKind.STREAM, []
    if code == OBJECT:
        if kind == DATA:
            data = _joined(body, kind)
            java = content_type is not None and parse_content_type(content_type)[0] == JAVA_SERIALIZED
            return BodyKind.OBJECT, JavaSerializedObject(data) if java else data
        if kind == AMQP_SEQUENCE:
            return BodyKind.OBJECT, body[0] if len(body) == 1 else [x for part in body for x in part]
        if kind == AMQP_VALUE:
            return BodyKind.OBJECT, body
        return BodyKind.OBJECT, None
    return BodyKind.MESSAGE, None
