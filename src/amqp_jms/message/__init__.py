"""amqp_jms.message: the JMS 2.0 message model (JMS 2.0 chapter 3).

Six message classes, constructible without a session: ``Message``, ``TextMessage("hi")``,
``BytesMessage()``, ``MapMessage()``, ``StreamMessage()``, ``ObjectMessage(obj)``. Method names
are the JMS names in snake_case (``set_int_property``, ``get_jms_correlation_id``, ``read_utf``).
Typed values use ``amqp_jms.types``: a byte property is a ``Byte`` (an ``int``), a float is a
32-bit ``Float``; plain ``int`` is a long, plain ``float`` a double, ``str`` a String.

Rules, as JMS states them: tables 3.2 (properties) and 3.7 (Map/Stream) for conversions, with
``NumberFormatException`` for a String that does not parse; a received message has read-only
properties and body (``MessageNotWriteableException``) until ``clear_properties()`` /
``clear_body()``; BytesMessage and StreamMessage are write-only until ``reset()``
(``MessageNotReadableException``) and raise ``MessageEOFException`` at the end. Where Java
throws NullPointerException these raise ``TypeError``; IllegalArgumentException is
``ValueError``. Reading a missing/null value follows Java's ``valueOf(null)``: ``False`` for
boolean, ``NumberFormatException`` for byte/short/int/long, ``TypeError`` for float/double/char,
``None`` for String/bytes/object. Numbers read as String use Java's ``toString`` (``1.0E10``) and
Strings read as numbers Java's ``valueOf`` rules, so values agree with a Java client's.

``get_body(cls)`` follows the JMS 2.0 javadoc: ``str`` for a TextMessage, ``bytes`` for a
BytesMessage, ``dict`` for a MapMessage, the object for an ObjectMessage (or any supertype, e.g.
``object``); ``None`` when there is no body (always, for a plain ``Message``); a StreamMessage
body is never assignable (``MessageFormatException``).

ObjectMessage carries any AMQP-typed value, never a pickle. A Java-serialized body from a Java
client is a ``JavaSerializedObject`` (raw bytes); ``obj.decode(allow=[...])`` is the opt-in,
allow-listed way to read the common Java types from it.

Provider SPI
------------
The mapping, the client and the broker use these names (and only these) to build, inspect and
hand over messages without the public setters' checks. They are stable; treat them as API.

Headers are plain attributes (getters/setters wrap them):

* ``_message_id: str | None``
* ``_timestamp: int`` (ms since the epoch, 0 = unset)
* ``_correlation_id: str | bytes | None`` (bytes = a binary id; reads as ``ID:AMQP_BINARY:<HEX>``)
* ``_reply_to: Destination | None``, ``_destination: Destination | None``
* ``_delivery_mode: int`` (1 or 2; a new message has 2 = PERSISTENT, so a decoder must set it)
* ``_redelivered: bool``, ``_type: str | None``
* ``_expiration: int``, ``_delivery_time: int`` (ms, 0 = none), ``_priority: int``

Properties: ``msg._props: dict[str, object]``, name -> typed value, insertion ordered. Writers
may put JMSX* and JMS_AMQP_* vendor properties straight in (no name validation). Values are
``bool``, ``Byte``, ``Short``, ``Int``, ``int`` (long), ``Float``, ``float`` (double), ``str``
or ``None``; other ``amqp_jms.types`` values a peer sent (``UInt``, ``Symbol``, ``Char`` ...)
are kept as they are and read through the conversions as the JMS type that holds them.
``clear_properties()`` removes everything in ``_props``.

Bodies:

* ``TextMessage._text: str | None``
* ``BytesMessage._body_bytes() -> bytes`` (whole body, any mode/position) and
  ``BytesMessage._set_body_bytes(b: bytes)``
* ``MapMessage._map: dict[str, typed value]`` (values as for properties, plus ``Char`` and
  ``bytes``)
* ``StreamMessage._items: list[typed value]`` (same value types as the map)
* ``ObjectMessage._object``: an AMQP-typed value, or a ``JavaSerializedObject``

Lifecycle:

* ``cls._blank()``: an empty message with default headers, no validation (the decoder's path).
* ``msg._mark_received()``: properties and body read-only; BytesMessage/StreamMessage in read
  mode at position 0.
* ``msg._ack_callback: Callable[[], None] | None``: called by ``acknowledge()`` (no-op if None).
* ``MessageData`` (``_data.py``): the message's data as one typed, immutable record.
  ``snapshot(msg)`` takes it, ``restore(data)`` makes a writable message of it. A send hands the
  provider a snapshot, never the caller's object: the producer sets the JMS headers on the
  caller's object (JMS 3.4: they are readable after ``send``), then snapshots it, so the caller
  may change and re-send the object as soon as ``send`` returns, on every path — a send queued
  while failover reconnects, or re-sent after a lost outcome, included
  (tests/unit/test_client_send_snapshot.py, tests/unit/test_failover_peer_send_snapshot.py).
  The mapping encodes from the record.
* ``msg._copy()``: an independent writable copy (``restore(snapshot(msg))``);
  BytesMessage/StreamMessage copies are in write mode holding the whole body. Tests and tools
  use it to get a writable message from a received one.
* ``msg._validate_names: bool`` (default True): False makes ``set_*_property`` accept any
  non-empty str name (``jms.validatePropertyNames=false``); copied by ``_copy()``.
* ``msg._extra: dict[str, object] | None``: free for the mapping/provider to keep data the JMS
  model has no place for (e.g. unknown AMQP annotations); copied (shallowly) by ``_copy()``;
  the message model never reads it.
"""

from ._base import (
    DEFAULT_DELIVERY_DELAY,
    DEFAULT_DELIVERY_MODE,
    DEFAULT_PRIORITY,
    DEFAULT_TIME_TO_LIVE,
    DeliveryMode,
    Message,
)
from ._bytes import BytesMessage
from ._data import BodyKind, MessageData, restore, snapshot
from ._javaser import JavaSerializedObject
from ._map import MapMessage
from ._names import is_property_name as is_valid_property_name
from ._object import ObjectMessage
from ._stream import StreamMessage
from ._text import TextMessage

__all__ = [
    "DEFAULT_DELIVERY_DELAY",
    "DEFAULT_DELIVERY_MODE",
    "DEFAULT_PRIORITY",
    "DEFAULT_TIME_TO_LIVE",
    "BodyKind",
    "BytesMessage",
    "DeliveryMode",
    "JavaSerializedObject",
    "MapMessage",
    "Message",
    "MessageData",
    "ObjectMessage",
    "StreamMessage",
    "TextMessage",
    "is_valid_property_name",
    "restore",
    "snapshot",
]
