"""``Message``: JMS headers, typed properties, read-only state and acknowledgement.

The class is a bag of ``__slots__`` so that the mapping can decode tens of thousands of messages
a second: headers are plain attributes (``_priority``, ``_message_id`` ...) that the getters and
setters wrap, properties are one insertion-ordered dict of typed values (see ``types.py``). The
slots are this package's own: every other layer reads and makes messages through the typed seam
(``MessageData`` and the functions of ``_data`` / ``_seam``, documented in ``amqp_jms.message``).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from ..destination import Destination
from ..exceptions import JMSException, MessageFormatException, MessageNotWriteableException
from ..types import Byte, Float, Int, Short
from . import _conversions as cv
from ._data import BodyKind
from ._ids import to_amqp_id
from ._names import _valid_cache as _valid_names
from ._names import check_property_name

__all__ = [
    "DEFAULT_DELIVERY_MODE",
    "DEFAULT_PRIORITY",
    "DEFAULT_TIME_TO_LIVE",
    "DeliveryMode",
    "Message",
]

T = TypeVar("T")
M = TypeVar("M", bound="Message")


class DeliveryMode(enum.IntEnum):
    """``javax.jms.DeliveryMode``: the values are the JMS constants."""

    NON_PERSISTENT = 1
    PERSISTENT = 2


DEFAULT_DELIVERY_MODE = DeliveryMode.PERSISTENT
DEFAULT_PRIORITY = 4
DEFAULT_TIME_TO_LIVE = 0
#: ``Message.DEFAULT_DELIVERY_DELAY`` (ms).
DEFAULT_DELIVERY_DELAY = 0

#: How a binary correlation id reads as a String (the OASIS AMQP JMS mapping's form, which Qpid
#: JMS uses too): ``ID:AMQP_BINARY:`` and the bytes in upper-case hex.
BINARY_ID_PREFIX = "ID:AMQP_BINARY:"
_MQ_ID_LEN = 3 + 48  # "ID:" + 24 bytes in hex: IBM MQ's provider id form
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def _is_hex(text: str) -> bool:
    return _HEX_DIGITS.issuperset(text)

_PERSISTENT = int(DeliveryMode.PERSISTENT)


class Message:
    """A JMS message with no body (``javax.jms.Message``).

    Headers: ``get/set_jms_*``. Properties: ``set_<type>_property`` / ``get_<type>_property``
    with the conversions of JMS table 3.2. A received message has read-only properties and body
    until ``clear_properties()`` / ``clear_body()``; headers stay writable.
    """

    __slots__ = (
        "__weakref__",
        "_ack_callback",
        "_body_ro",
        "_correlation_id",
        "_delivery_mode",
        "_delivery_time",
        "_destination",
        "_expiration",
        "_extra",
        "_message_id",
        "_priority",
        "_props",
        "_props_ro",
        "_redelivered",
        "_reply_to",
        "_timestamp",
        "_type",
        "_validate_names",
    )

    #: The JMS interface name, used by ``repr`` and error messages.
    jms_type: ClassVar[str] = "Message"
    #: The ``javax.jms.Message`` constants, also module-level in ``amqp_jms``.
    DEFAULT_DELIVERY_MODE: ClassVar[int] = int(DeliveryMode.PERSISTENT)
    DEFAULT_PRIORITY: ClassVar[int] = 4
    DEFAULT_TIME_TO_LIVE: ClassVar[int] = 0
    DEFAULT_DELIVERY_DELAY: ClassVar[int] = 0

    _props: dict[str, Any]
    _props_ro: bool
    _body_ro: bool
    _ack_callback: Callable[[], None] | None
    _extra: dict[str, Any] | None
    _message_id: str | None
    _timestamp: int
    _correlation_id: str | bytes | None
    _reply_to: Destination | None
    _destination: Destination | None
    _delivery_mode: int
    _redelivered: bool
    _type: str | None
    _expiration: int
    _delivery_time: int
    _priority: int
    #: False for messages of a connection with ``jms.validatePropertyNames=false``: property
    #: names are then only checked for None/empty (only consulted for names not cached valid)
    _validate_names: bool

    def __init__(self) -> None:
        self._init_headers()

    def _init_headers(self) -> None:
        self._props = {}
        self._props_ro = False
        self._body_ro = False
        self._ack_callback = None
        self._extra = None
        self._message_id = None
        self._timestamp = 0
        self._correlation_id = None
        self._reply_to = None
        self._destination = None
        self._delivery_mode = _PERSISTENT
        self._redelivered = False
        self._type = None
        self._expiration = 0
        self._delivery_time = 0
        self._priority = DEFAULT_PRIORITY
        self._validate_names = True

    def _init_body(self) -> None:
        """Set the body slots to an empty, writable body (subclasses override)."""

    @classmethod
    def _blank(cls: type[M]) -> M:
        """An empty message with default headers, built without any checks (for decoders)."""
        msg = cls.__new__(cls)
        msg._init_headers()
        msg._init_body()
        return msg

    # ------------------------------------------------------------------ the seam's hooks (_data, _seam)

    def _mark_received(self) -> None:
        """Make properties and body read-only, as for a message handed to a consumer."""
        self._props_ro = True
        self._body_ro = True

    #: which JMS message type this class is (``MessageData.kind``)
    _body_kind: ClassVar[BodyKind] = BodyKind.MESSAGE

    def _body_snapshot(self) -> Any:
        """The body as ``MessageData.body`` holds it: a value nobody else can change."""
        return None

    def _body_view(self) -> Any:
        """The body as ``MessageData.body`` holds it, uncopied (``view``: read at once)."""
        return self._body_snapshot()

    def _restore_body(self, body: Any) -> None:
        """Set a writable body from ``MessageData.body`` (a copy of it)."""

    def _adopt_received_body(self, body: Any) -> None:
        """Take ``MessageData.body`` itself as a received (read-only) body (``receive``: a
        decoder's own value), in the read state ``_mark_received`` sets."""

    def _has_body(self) -> bool:
        return False

    # ------------------------------------------------------------------ headers

    def get_jms_message_id(self) -> str | None:
        """The id ``send`` assigned (``ID:...``; ``None`` before send or with ids disabled): what a
        reply correlates to."""
        return self._message_id

    def set_jms_message_id(self, message_id: str | None) -> None:
        """Set by ``send`` (JMS 2.0 §3.4.3): a value set here is replaced when the message is sent;
        the setter exists so a provider can fill in a message of another implementation."""
        if message_id is not None and not isinstance(message_id, str):
            raise TypeError(f"JMSMessageID must be a str or None, not {type(message_id).__name__}")
        self._message_id = message_id

    def get_jms_timestamp(self) -> int:
        """Milliseconds since the epoch when the message was handed to send; 0 if not set."""
        return self._timestamp

    def set_jms_timestamp(self, timestamp: int) -> None:
        """Set by ``send`` (JMS 2.0 §3.4.4): a value set here is replaced when the message is sent;
        the setter exists so a provider can fill in a message of another implementation."""
        self._timestamp = _header_long(timestamp, "JMSTimestamp")

    def get_jms_correlation_id(self) -> str | None:
        """The correlation id as a String. A binary id (set with ``set_jms_correlation_id_as_bytes``
        or received from a peer) reads as ``ID:AMQP_BINARY:<hex>``."""
        cid = self._correlation_id
        if cid is None or type(cid) is str:
            return cid
        if isinstance(cid, bytes):
            return BINARY_ID_PREFIX + cid.hex().upper()
        return str(cid)

    def set_jms_correlation_id(self, correlation_id: str | None) -> None:
        """Link a reply to its request: the application sets it (usually to the request's
        JMSMessageID) and the requester selects on it."""
        if correlation_id is not None and not isinstance(correlation_id, str):
            raise TypeError(
                f"JMSCorrelationID must be a str or None, not {type(correlation_id).__name__} "
                "(use set_jms_correlation_id_as_bytes for bytes)"
            )
        if correlation_id is not None and correlation_id.startswith("ID:AMQP_"):
            # a malformed encoded AMQP id (OASIS AMQP JMS Mapping 3.2.1.1) is refused here,
            # not at send
            to_amqp_id(correlation_id, "JMSCorrelationID")
        self._correlation_id = correlation_id

    def get_jms_correlation_id_as_bytes(self) -> bytes | None:
        """The correlation id as bytes: a binary id (set as bytes, as ``ID:AMQP_BINARY:<hex>``, or
        received as AMQP binary). Any other raises ``JMSException``, as in Qpid JMS: a String id
        has no byte form the peer would recognise."""
        cid = self._correlation_id
        if cid is None or isinstance(cid, bytes):
            return cid
        if isinstance(cid, str) and cid.startswith(BINARY_ID_PREFIX):
            return bytes.fromhex(cid[len(BINARY_ID_PREFIX):])
        if isinstance(cid, str) and len(cid) == _MQ_ID_LEN and cid.startswith("ID:") and _is_hex(cid[3:]):
            # IBM MQ's form of a binary CorrelId (24 bytes as ID: + 48 hex digits), as an MQ
            # message reads back: its bytes are the 24 raw ones, as IBM MQ JMS returns them
            return bytes.fromhex(cid[3:])
        raise JMSException(f"JMSCorrelationID {cid!r} is not binary: it has no byte form "
                           "(get_jms_correlation_id reads it)")

    def set_jms_correlation_id_as_bytes(self, correlation_id: bytes | bytearray | None) -> None:
        """A binary correlation id, sent as AMQP binary: for peers whose ids are not strings."""
        if correlation_id is None:
            self._correlation_id = None
        elif isinstance(correlation_id, (bytes, bytearray, memoryview)):
            self._correlation_id = bytes(correlation_id)
        else:
            raise TypeError(f"correlation id bytes must be bytes, not {type(correlation_id).__name__}")

    def get_jms_reply_to(self) -> Destination | None:
        """Where the sender wants replies: a replier sends its answer to this destination."""
        return self._reply_to

    def set_jms_reply_to(self, destination: Destination | None) -> None:
        """Ask for replies at ``destination`` (often a TemporaryQueue); ``None`` for no reply."""
        self._reply_to = _header_destination(destination, "JMSReplyTo")

    def get_jms_destination(self) -> Destination | None:
        """The destination the message was sent to (set by send), so code that handles messages
        from several destinations, such as one listener on many consumers, can tell them apart."""
        return self._destination

    def set_jms_destination(self, destination: Destination | None) -> None:
        """Set by ``send`` (JMS 2.0 §3.4.1): a value set here is replaced when the message is sent;
        the setter exists so a provider can fill in a message of another implementation."""
        self._destination = _header_destination(destination, "JMSDestination")

    def get_jms_delivery_mode(self) -> int:
        """``DeliveryMode.PERSISTENT`` (2) or ``DeliveryMode.NON_PERSISTENT`` (1)."""
        return self._delivery_mode

    def set_jms_delivery_mode(self, delivery_mode: int) -> None:
        """Set by ``send`` (JMS 2.0 §3.4.2): a value set here is replaced when the message is sent;
        the setter exists so a provider can fill in a message of another implementation.
        Choose the mode with the producer's ``set_delivery_mode``."""
        if delivery_mode not in (1, 2) or type(delivery_mode) is bool:
            raise ValueError(
                f"JMSDeliveryMode must be 1 (NON_PERSISTENT) or 2 (PERSISTENT), not {delivery_mode!r}"
            )
        self._delivery_mode = int(delivery_mode)

    def get_jms_redelivered(self) -> bool:
        """True when this message may have been delivered before: a consumer that has side
        effects uses it to check for a duplicate."""
        return self._redelivered

    def set_jms_redelivered(self, redelivered: bool) -> None:
        """Set by the provider on receive (JMS 2.0 §3.4.7); meaningless on a message to send."""
        if type(redelivered) is not bool:
            raise TypeError(f"JMSRedelivered must be a bool, not {type(redelivered).__name__}")
        self._redelivered = redelivered

    def get_jms_type(self) -> str | None:
        """The application's message type name (free text, e.g. for a selector to route on)."""
        return self._type

    def set_jms_type(self, jms_type: str | None) -> None:
        """Name the message's type for receivers; it travels as is (no type repository is consulted)."""
        if jms_type is not None and not isinstance(jms_type, str):
            raise TypeError(f"JMSType must be a str or None, not {type(jms_type).__name__}")
        self._type = jms_type

    def get_jms_expiration(self) -> int:
        """Expiry time in ms since the epoch; 0 means the message never expires."""
        return self._expiration

    def set_jms_expiration(self, expiration: int) -> None:
        """Set by ``send`` (JMS 2.0 §3.4.9): a value set here is replaced when the message is sent;
        the setter exists so a provider can fill in a message of another implementation.
        Choose a time-to-live with the producer instead."""
        self._expiration = _header_long(expiration, "JMSExpiration")

    def get_jms_delivery_time(self) -> int:
        """Earliest delivery time in ms since the epoch (send time + delivery delay)."""
        return self._delivery_time

    def set_jms_delivery_time(self, delivery_time: int) -> None:
        """Set by ``send`` (JMS 2.0 §3.4.13): a value set here is replaced when the message is sent;
        the setter exists so a provider can fill in a message of another implementation.
        Choose a delivery delay with the producer instead."""
        self._delivery_time = _header_long(delivery_time, "JMSDeliveryTime")

    def get_jms_priority(self) -> int:
        """0 (lowest) to 9, default 4: 0-4 are normal, 5-9 expedited; a broker may deliver higher first."""
        return self._priority

    def set_jms_priority(self, priority: int) -> None:
        """Set by ``send`` (JMS 2.0 §3.4.10): a value set here is replaced when the message is sent;
        the setter exists so a provider can fill in a message of another implementation.
        Choose the priority with the producer."""
        if type(priority) is bool or not isinstance(priority, int) or not 0 <= priority <= 9:
            raise ValueError(f"JMSPriority must be an int from 0 to 9, not {priority!r}")
        self._priority = int(priority)

    # ------------------------------------------------------------------ properties

    def _check_props_writable(self, name: str) -> None:
        # JMS_AMQP_ACK_TYPE is how a consumer chooses the outcome of one received message
        # (Qpid JMS): it must be settable while the rest of the properties are read-only.
        if self._props_ro and name != "JMS_AMQP_ACK_TYPE":
            raise MessageNotWriteableException(
                "the message properties are read-only (a received message); call clear_properties() first"
            )

    def _vet_property(self, name: str) -> None:
        """What every ``set_*_property`` checks before it writes, outside its fast path (a
        writable message and a name already seen valid): writable, then a valid name."""
        if self._props_ro:
            self._check_props_writable(name)
        if name not in _valid_names:
            check_property_name(name, self._validate_names)

    def property_exists(self, name: str) -> bool:
        return name in self._props

    def get_property_names(self) -> list[str]:
        """Names of all properties (JMSX* and vendor ones included; header names are not)."""
        return list(self._props)

    def clear_properties(self) -> None:
        """Remove every property and make the properties writable (the body is untouched)."""
        self._props = {}
        self._props_ro = False

    def set_boolean_property(self, name: str, value: bool) -> None:
        if self._props_ro or name not in _valid_names:
            self._vet_property(name)
        self._props[name] = value if type(value) is bool else cv.as_boolean(value)

    def set_byte_property(self, name: str, value: int) -> None:
        if self._props_ro or name not in _valid_names:
            self._vet_property(name)
        self._props[name] = cv.as_byte(value)

    def set_short_property(self, name: str, value: int) -> None:
        if self._props_ro or name not in _valid_names:
            self._vet_property(name)
        self._props[name] = cv.as_short(value)

    def set_int_property(self, name: str, value: int) -> None:
        if self._props_ro or name not in _valid_names:
            self._vet_property(name)
        self._props[name] = cv.as_int(value)

    def set_long_property(self, name: str, value: int) -> None:
        if self._props_ro or name not in _valid_names:
            self._vet_property(name)
        self._props[name] = cv.as_long(value)

    def set_float_property(self, name: str, value: float) -> None:
        if self._props_ro or name not in _valid_names:
            self._vet_property(name)
        self._props[name] = cv.as_float(value)

    def set_double_property(self, name: str, value: float) -> None:
        if self._props_ro or name not in _valid_names:
            self._vet_property(name)
        self._props[name] = value if type(value) is float else cv.as_double(value)

    def set_string_property(self, name: str, value: str | None) -> None:
        if self._props_ro or name not in _valid_names:
            self._vet_property(name)
        self._props[name] = value if type(value) is str else cv.as_string(value)

    def set_object_property(self, name: str, value: object) -> None:
        """Store a typed value as is: ``bool``, ``Byte``, ``Short``, ``Int``, ``int`` (long),
        ``Float``, ``float`` (double), ``str`` or ``None``; anything else is a
        ``MessageFormatException``."""
        if self._props_ro or name not in _valid_names:
            self._vet_property(name)
        self._props[name] = cv.as_property_object(value)

    def get_boolean_property(self, name: str) -> bool:
        value = self._props.get(name)
        if type(value) is bool:
            return value
        return cv.read_as_boolean(value, ("property", name))

    def get_byte_property(self, name: str) -> Byte:
        value = self._props.get(name)
        if type(value) is Byte:
            return value
        return cv.read_as_byte(value, ("property", name))

    def get_short_property(self, name: str) -> Short:
        value = self._props.get(name)
        if type(value) is Short:
            return value
        return cv.read_as_short(value, ("property", name))

    def get_int_property(self, name: str) -> Int:
        value = self._props.get(name)
        if type(value) is Int:
            return value
        return cv.read_as_int(value, ("property", name))

    def get_long_property(self, name: str) -> int:
        value = self._props.get(name)
        if type(value) is int:
            return value
        return cv.read_as_long(value, ("property", name))

    def get_float_property(self, name: str) -> Float:
        value = self._props.get(name)
        if type(value) is Float:
            return value
        return cv.read_as_float(value, ("property", name))

    def get_double_property(self, name: str) -> float:
        value = self._props.get(name)
        if type(value) is float:
            return value
        return cv.read_as_double(value, ("property", name))

    def get_string_property(self, name: str) -> str | None:
        value = self._props.get(name)
        if type(value) is str:
            return value
        return cv.read_as_string(value, ("property", name))

    def get_object_property(self, name: str) -> Any:
        """The typed value as stored (``Byte(5)`` for a byte), or ``None`` if absent."""
        return self._props.get(name)

    # ------------------------------------------------------------------ body

    def _check_body_writable(self) -> None:
        if self._body_ro:
            raise MessageNotWriteableException(
                f"the {self.jms_type} body is read-only; call clear_body() first"
            )

    def clear_body(self) -> None:
        """Empty the body and make it writable (the properties are untouched)."""
        self._init_body()
        self._body_ro = False

    def _body_value(self) -> Any:
        """The body as ``get_body`` returns it (subclasses override)."""
        return None

    def is_body_assignable_to(self, cls: type) -> bool:
        """Whether ``get_body(cls)`` would succeed. A message with no body is assignable to any
        type; a StreamMessage never is."""
        if not isinstance(cls, type):
            raise TypeError(f"is_body_assignable_to needs a type, not {cls!r}")
        if not self._has_body():
            return True
        return isinstance(self._body_value(), cls)

    def get_body(self, cls: type[T]) -> T | None:
        """The body as ``cls`` (``str`` for a TextMessage, ``bytes`` for a BytesMessage, ``dict``
        for a MapMessage, the object for an ObjectMessage, or a supertype such as ``object``);
        ``None`` if there is no body. ``MessageFormatException`` if the body is not a ``cls``."""
        if not self.is_body_assignable_to(cls):
            raise MessageFormatException(
                f"the {self.jms_type} body cannot be returned as {cls.__name__}"
            )
        if not self._has_body():
            return None
        body: T = self._body_value()
        return body

    # ------------------------------------------------------------------ acknowledgement

    def acknowledge(self) -> None:
        """Acknowledge this message (and, per JMS, every message consumed by its session so far)
        when the session uses CLIENT_ACKNOWLEDGE; a no-op for a message no session owns."""
        callback = self._ack_callback
        if callback is not None:
            callback()

    # ------------------------------------------------------------------ python protocol

    def _repr_body(self) -> str:
        return ""

    def __repr__(self) -> str:
        parts = []
        if self._message_id is not None:
            parts.append(f"id={self._message_id!r}")
        if self._destination is not None:
            parts.append(f"destination={self._destination}")
        if self._correlation_id is not None:
            parts.append(f"correlation_id={self._correlation_id!r}")
        if self._type is not None:
            parts.append(f"type={self._type!r}")
        if self._props:
            parts.append(f"properties={self._props!r}")
        body = self._repr_body()
        if body:
            parts.append(body)
        if self._props_ro or self._body_ro:
            parts.append("read-only")
        return f"{self.jms_type}({', '.join(parts)})"

    # No __eq__: equality stays identity, two messages with equal content are two messages.


def _header_long(value: object, what: str) -> int:
    if type(value) is bool or not isinstance(value, int):
        raise TypeError(f"{what} must be an int (ms since the epoch), not {type(value).__name__}")
    if not -(2**63) <= value < 2**63:
        raise ValueError(f"{what} {value} is out of range for a long")
    return int(value)


def _header_destination(value: object, what: str) -> Destination | None:
    if value is not None and not isinstance(value, Destination):
        raise TypeError(f"{what} must be a Destination or None, not {type(value).__name__}")
    return value
