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

The seam under the JMS face
---------------------------
``Message`` keeps its data in ``__slots__`` (fast to build and read); nothing outside this
package touches them. The mapping, mq, spark, the client, the provider and the acknowledgement
rules go through a typed seam instead, so mypy checks a message's data end to end:

* ``MessageData`` (``_data.py``): the message's data as one typed, immutable record: ``kind``
  (``BodyKind``), ``body`` (TEXT ``str | None``; BYTES ``bytes``; MAP ``dict[str, typed value]``;
  STREAM ``list[typed value]``; OBJECT an AMQP-typed value or a ``JavaSerializedObject``),
  ``properties`` (name -> typed value, insertion ordered: ``bool``, ``Byte``, ``Short``, ``Int``,
  ``int`` (long), ``Float``, ``float`` (double), ``str``, ``None``, and whatever other
  ``amqp_jms.types`` value a peer sent, read through the conversions as the JMS type that holds
  it), the JMS headers, and ``extra`` (what the mapping keeps that the JMS model has no place for:
  unknown AMQP annotations, MQ folders; the message model never reads it).
* Reading: ``view(msg)`` (containers uncopied: for a reader that uses the record at once: the
  encoders, spark's rows, ``to_mq``) and ``snapshot(msg)`` (copied: what a send hands the
  provider, never the caller's object, so the caller may change and re-send it as soon as
  ``send`` returns, on every path, failover's queued sends included:
  tests/unit/test_client_send_snapshot.py, tests/unit/test_failover_peer_send_snapshot.py).
* Making: ``receive(kind, body, properties, ...)`` (the decoders: a read-only delivered message
  taking the decoder's own containers; the fields are typed parameters, no intermediate record),
  ``received(data)`` (a delivered message holding a copy of a record), ``restore(data)`` (a new,
  writable message), ``record(kind, ...)`` (a record with the JMS defaults).
* Acting (``_seam.py``): ``stamp_send`` / ``stamp_delivery_time`` (the headers ``send`` owns,
  ``JMSXUserID``), ``mark_received``, ``set_ack_callback`` (what ``acknowledge()`` calls),
  ``set_redelivered`` (a local redelivery, counted into the read-only properties),
  ``trust_property_names`` (``jms.validatePropertyNames=false``).

``amqp_jms.testing.messages`` builds messages with data the setters refuse (AMQP-typed or
JMSX properties, binary correlation ids) through the record, for tests and tools.
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
