"""JMSProducer: the fluent sender of a JMSContext (JMS 2.0 section 11.3).

Its settings apply to every later send; its message properties and correlation id are stored
and converted exactly as a message's (a probe message applies the same rules).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

from ..destination import Destination
from ..exceptions import JMSRuntimeException, MessageFormatRuntimeException
from ..message import BodyKind, DeliveryMode, Message, restore
from ..message._data import record
from ..message._seam import trust_property_names
from ._runtime import runtime as _runtime
from .completion import RETURN_FUTURE
from .waits import ProviderWait

if TYPE_CHECKING:
    from .context import JMSContext
    from .producer import MessageProducer

__all__ = ["JMSProducer", "ProducerSettings"]


class ProducerSettings:
    """What ``JMSProducer`` and its asyncio twin (``aio.AsyncJMSProducer``) share: the fluent
    settings, properties and header values applied to each message sent, and the send itself
    (``_send``); each face adds only how it waits for the outcome."""

    def __init__(self, context: JMSContext) -> None:
        self._ctx = context
        self._delivery_mode: int = DeliveryMode.PERSISTENT
        self._priority = Message.DEFAULT_PRIORITY
        self._ttl = 0
        self._delay = 0
        self._disable_id = False
        self._disable_ts = False
        self._listener: Any = None
        self._props: dict[str, Any] = {}
        self._correlation_id: str | bytes | None = None
        self._type: str | None = None
        self._reply_to: Destination | None = None

    def _send_unwaited(self, destination: Destination, body: Any) -> ProviderWait | None:
        """Send, handing back the wait for the outcome (None when there is nothing to wait
        for, or when ``set_async`` set a completion listener, which then hears the outcome)."""
        return self._send(destination, body, RETURN_FUTURE if self._listener is None else self._listener)

    def _send(self, destination: Destination, body: Any, listener: Any) -> ProviderWait | None:
        p, message = self._prepare(destination, body)
        with _runtime():
            return p.internal.send_resolved(destination, message, self._delivery_mode, self._priority,
                                            self._ttl, listener)

    def _prepare(self, destination: Destination, body: Any) -> tuple[MessageProducer, Message]:
        """The context's producer, configured, and the message with this producer's values."""
        ctx = self._ctx
        ctx.internal.check_open()
        if destination is None:
            from ..exceptions import InvalidDestinationRuntimeException

            raise InvalidDestinationRuntimeException("send needs a destination, got None")
        message = body if isinstance(body, Message) else self._wrap(body)
        with _runtime():
            for name, value in self._props.items():
                message.set_object_property(name, value)
            if isinstance(self._correlation_id, bytes):
                message.set_jms_correlation_id_as_bytes(self._correlation_id)
            elif self._correlation_id is not None:
                message.set_jms_correlation_id(self._correlation_id)
            if self._type is not None:
                message.set_jms_type(self._type)
            if self._reply_to is not None:
                message.set_jms_reply_to(self._reply_to)
            p = ctx.internal.message_producer()
            p.set_delivery_delay(self._delay)
            p.set_disable_message_id(self._disable_id)
            p.set_disable_message_timestamp(self._disable_ts)
        return p, message

    def _wrap(self, body: Any) -> Message:
        s = self._ctx.internal.session
        with _runtime():
            if body is None:
                return s.create_message()
            if isinstance(body, str):
                return s.create_text_message(body)
            if isinstance(body, bytes | bytearray | memoryview):
                m = s.create_bytes_message()
                m.write_bytes(bytes(body))
                return m
            if isinstance(body, dict):
                mm = s.create_map_message()
                for k, v in body.items():
                    if not isinstance(k, str):
                        raise MessageFormatRuntimeException(f"a map body needs str keys, got {k!r}")
                    mm.set_object(k, v)
                return mm
            return s.create_object_message(body)

    # -- fluent settings -----------------------------------------------------------------------
    def set_delivery_mode(self, mode: int) -> Self:
        if mode not in (DeliveryMode.PERSISTENT, DeliveryMode.NON_PERSISTENT):
            raise JMSRuntimeException(f"invalid delivery mode {mode!r}")
        self._delivery_mode = mode
        return self

    def get_delivery_mode(self) -> int:
        return self._delivery_mode

    def set_priority(self, priority: int) -> Self:
        if type(priority) is bool or not isinstance(priority, int) or not 0 <= priority <= 9:
            raise JMSRuntimeException(f"invalid priority {priority!r}: must be an int from 0 to 9")
        self._priority = priority
        return self

    def get_priority(self) -> int:
        return self._priority

    def set_time_to_live(self, ttl_ms: int) -> Self:
        self._ttl = int(ttl_ms)
        return self

    def get_time_to_live(self) -> int:
        return self._ttl

    def set_delivery_delay(self, delay_ms: int) -> Self:
        self._delay = int(delay_ms)
        return self

    def get_delivery_delay(self) -> int:
        return self._delay

    def set_disable_message_id(self, value: bool) -> Self:
        self._disable_id = bool(value)
        return self

    def get_disable_message_id(self) -> bool:
        return self._disable_id

    def set_disable_message_timestamp(self, value: bool) -> Self:
        self._disable_ts = bool(value)
        return self

    def get_disable_message_timestamp(self) -> bool:
        return self._disable_ts

    def set_async(self, completion_listener: Any) -> Self:
        """A CompletionListener makes later sends asynchronous; None makes them synchronous."""
        self._listener = completion_listener
        return self

    def get_async(self) -> Any:
        return self._listener

    # -- message properties: stored and converted exactly as a message's (JMS 3.5.4 tables) --
    def _probe(self) -> Message:
        """A message holding this producer's properties: its typed setters and getters apply
        the message's validation and conversion rules, so none is written twice."""
        probe = restore(record(BodyKind.MESSAGE, properties=self._props))
        if not self._ctx.internal.connection.internal.config.validate_property_names:
            trust_property_names(probe)
        return probe

    def _set(self, setter: str, name: str, value: Any) -> Self:
        probe = self._probe()
        with _runtime():
            getattr(probe, setter)(name, value)
        self._props[name] = probe.get_object_property(name)
        return self

    def _get(self, getter: str, name: str) -> Any:
        with _runtime():
            return getattr(self._probe(), getter)(name)

    def set_property(self, name: str, value: Any) -> Self:
        """A message property for every later send (validated now, as the message would)."""
        return self._set("set_object_property", name, value)

    def set_boolean_property(self, name: str, value: bool) -> Self:
        return self._set("set_boolean_property", name, value)

    def set_byte_property(self, name: str, value: int) -> Self:
        return self._set("set_byte_property", name, value)

    def set_short_property(self, name: str, value: int) -> Self:
        return self._set("set_short_property", name, value)

    def set_int_property(self, name: str, value: int) -> Self:
        return self._set("set_int_property", name, value)

    def set_long_property(self, name: str, value: int) -> Self:
        return self._set("set_long_property", name, value)

    def set_float_property(self, name: str, value: float) -> Self:
        return self._set("set_float_property", name, value)

    def set_double_property(self, name: str, value: float) -> Self:
        return self._set("set_double_property", name, value)

    def set_string_property(self, name: str, value: str | None) -> Self:
        return self._set("set_string_property", name, value)

    def set_object_property(self, name: str, value: Any) -> Self:
        return self._set("set_object_property", name, value)

    def get_boolean_property(self, name: str) -> bool:
        return bool(self._get("get_boolean_property", name))

    def get_byte_property(self, name: str) -> int:
        return int(self._get("get_byte_property", name))

    def get_short_property(self, name: str) -> int:
        return int(self._get("get_short_property", name))

    def get_int_property(self, name: str) -> int:
        return int(self._get("get_int_property", name))

    def get_long_property(self, name: str) -> int:
        return int(self._get("get_long_property", name))

    def get_float_property(self, name: str) -> float:
        return float(self._get("get_float_property", name))

    def get_double_property(self, name: str) -> float:
        return float(self._get("get_double_property", name))

    def get_string_property(self, name: str) -> str | None:
        value: str | None = self._get("get_string_property", name)
        return value

    def get_object_property(self, name: str) -> Any:
        return self._props.get(name)

    def clear_properties(self) -> Self:
        self._props.clear()
        return self

    def property_exists(self, name: str) -> bool:
        return name in self._props

    def get_property_names(self) -> list[str]:
        return list(self._props)

    def set_jms_correlation_id(self, correlation_id: str | None) -> Self:
        """Validated now, as the message would (an invalid ``ID:AMQP_...`` form is refused)."""
        with _runtime():
            Message().set_jms_correlation_id(correlation_id)
        self._correlation_id = correlation_id
        return self

    def get_jms_correlation_id(self) -> str | None:
        if isinstance(self._correlation_id, bytes):
            probe = Message()
            probe.set_jms_correlation_id_as_bytes(self._correlation_id)
            return probe.get_jms_correlation_id()
        return self._correlation_id

    def set_jms_correlation_id_as_bytes(self, correlation_id: bytes | bytearray | None) -> Self:
        """A binary correlation id for every later send (sent as AMQP binary)."""
        with _runtime():
            probe = Message()
            probe.set_jms_correlation_id_as_bytes(correlation_id)
        self._correlation_id = probe.get_jms_correlation_id_as_bytes()
        return self

    def get_jms_correlation_id_as_bytes(self) -> bytes | None:
        with _runtime():
            probe = restore(record(BodyKind.MESSAGE, correlation_id=self._correlation_id))
            return probe.get_jms_correlation_id_as_bytes()

    def set_jms_type(self, jms_type: str | None) -> Self:
        self._type = jms_type
        return self

    def get_jms_type(self) -> str | None:
        return self._type

    def set_jms_reply_to(self, destination: Destination | None) -> Self:
        self._reply_to = destination
        return self

    def get_jms_reply_to(self) -> Destination | None:
        return self._reply_to


class JMSProducer(ProducerSettings):
    """Fluent message sender of a ``JMSContext`` (JMS 2.0 section 11.3)."""

    def send(self, destination: Destination, body: Any) -> Self:
        """Send a ``Message`` or a body (str, bytes, dict, other object) to ``destination``;
        waits for the peer's outcome when the send waits (docs/client.md, "Which sends wait")."""
        self._send(destination, body, self._listener)
        return self
