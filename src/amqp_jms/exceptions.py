"""The JMS exception hierarchy, with the JMS names.

Every error a user of amqp-jms sees is one of these (or a plain ``TypeError`` / ``ValueError``
where Java would throw ``NullPointerException`` / ``IllegalArgumentException``). Protocol errors
are translated into them at one seam in the provider, keeping the AMQP error condition in
``error_code`` and the original exception as ``linked_exception`` and ``__cause__``::

    Exception
    ├── JMSException                       checked exceptions of the standard API
    │   ├── IllegalStateException
    │   ├── InvalidClientIDException
    │   ├── InvalidDestinationException
    │   ├── InvalidSelectorException
    │   ├── JMSSecurityException
    │   │   └── JMSSecuritySaslException   (the login was refused: the SASL outcome code)
    │   ├── MessageEOFException
    │   ├── MessageFormatException
    │   │   └── MQFormatError              (amqp_jms.mq: a malformed MQ structure)
    │   ├── MessageNotReadableException
    │   ├── MessageNotWriteableException
    │   ├── ResourceAllocationException
    │   ├── TransactionInProgressException
    │   ├── TransactionRolledBackException
    │   └── SendFailedException            (amqp_jms: a send refused by the peer)
    ├── JMSRuntimeException                unchecked twins, raised by the simplified API
    │   ├── IllegalStateRuntimeException
    │   ├── InvalidClientIDRuntimeException
    │   ├── InvalidDestinationRuntimeException
    │   ├── InvalidSelectorRuntimeException
    │   ├── JMSSecurityRuntimeException
    │   ├── MessageFormatRuntimeException
    │   ├── MessageNotWriteableRuntimeException
    │   ├── ResourceAllocationRuntimeException
    │   ├── TransactionInProgressRuntimeException
    │   └── TransactionRolledBackRuntimeException
    └── ValueError
        └── NumberFormatException          a string that does not parse as the number asked for
"""

from __future__ import annotations

__all__ = [
    "IllegalStateException",
    "IllegalStateRuntimeException",
    "InvalidClientIDException",
    "InvalidClientIDRuntimeException",
    "InvalidDestinationException",
    "InvalidDestinationRuntimeException",
    "InvalidSelectorException",
    "InvalidSelectorRuntimeException",
    "JMSException",
    "JMSRuntimeException",
    "JMSSecurityException",
    "JMSSecurityRuntimeException",
    "JMSSecuritySaslException",
    "MessageEOFException",
    "MessageFormatException",
    "MessageFormatRuntimeException",
    "MessageNotReadableException",
    "MessageNotWriteableException",
    "MessageNotWriteableRuntimeException",
    "NumberFormatException",
    "ResourceAllocationException",
    "ResourceAllocationRuntimeException",
    "SendFailedException",
    "TransactionInProgressException",
    "TransactionInProgressRuntimeException",
    "TransactionRolledBackException",
    "TransactionRolledBackRuntimeException",
    "to_runtime",
]


class _JMSError(Exception):
    """What the checked and the unchecked roots share: the reason, the provider's error code,
    the lower-level cause, and how they print (``reason [error_code]``). Private: users catch
    ``JMSException`` or ``JMSRuntimeException``, never this."""

    reason: str
    error_code: str | None
    linked_exception: BaseException | None

    def __init__(
        self,
        reason: str,
        error_code: str | None = None,
        linked_exception: BaseException | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.error_code = error_code
        self.linked_exception = linked_exception
        if linked_exception is not None:
            self.__cause__ = linked_exception

    def get_error_code(self) -> str | None:
        return self.error_code

    def __str__(self) -> str:
        if self.error_code:
            return f"{self.reason} [{self.error_code}]"
        return self.reason


class JMSException(_JMSError):
    """Root of the checked JMS exceptions.

    ``error_code`` is a provider-specific code (for AMQP errors, the error condition symbol such
    as ``amqp:not-found``); ``linked_exception`` is the lower-level cause, if any.
    """

    def get_linked_exception(self) -> BaseException | None:
        return self.linked_exception

    def set_linked_exception(self, exc: BaseException | None) -> None:
        self.linked_exception = exc
        self.__cause__ = exc


class IllegalStateException(JMSException):
    """A method was called at a time or in a state where it is not allowed."""


class TransactionInProgressException(JMSException):
    """An operation is invalid because a transaction is in progress (a JMSException, not an
    IllegalStateException: as in Java)."""


class InvalidClientIDException(JMSException):
    """The client ID was rejected (invalid, or already in use by another connection)."""


class InvalidDestinationException(JMSException):
    """The destination is unknown, of the wrong kind, or deleted."""


class InvalidSelectorException(JMSException):
    """A message selector has a syntax error; the message names the position and what was expected."""


class JMSSecurityException(JMSException):
    """Authentication failed or an operation was not authorized."""


SASL_SYS_TEMP = 4  # AMQP 1.0 part 5.3.3.6, sasl-code sys-temp


class JMSSecuritySaslException(JMSSecurityException):
    """The server refused the SASL login; ``outcome`` is its sasl-code (1 auth, 2 sys,
    3 sys-perm, 4 sys-temp; 0 when unknown), as Qpid JMS's exception of the same name carries.

    Only sys-temp (a temporary system error) is worth trying again: failover retries it, and
    stops at once on the others."""

    def __init__(
        self,
        reason: str,
        error_code: str | None = None,
        linked_exception: BaseException | None = None,
        *,
        outcome: int = 0,
    ) -> None:
        super().__init__(reason, error_code, linked_exception)
        self.outcome = outcome
        if isinstance(linked_exception, JMSSecuritySaslException) and not outcome:
            self.outcome = linked_exception.outcome  # a re-raised copy keeps the code

    @property
    def sys_temp_failure(self) -> bool:
        """The server had a temporary problem: another attempt may succeed."""
        return self.outcome == SASL_SYS_TEMP


class MessageEOFException(JMSException):
    """An unexpected end of a stream was reached reading a StreamMessage or BytesMessage."""


class MessageFormatException(JMSException):
    """A value has the wrong type for the field, or an encoding is malformed."""


class MessageNotReadableException(JMSException):
    """A write-only message (body not yet ``reset()``) was read."""


class MessageNotWriteableException(JMSException):
    """A read-only message (as received) was written."""


class ResourceAllocationException(JMSException):
    """The provider could not allocate a resource (e.g. a peer's resource limit was exceeded)."""


class TransactionRolledBackException(JMSException):
    """A commit failed and the transaction was rolled back."""


class SendFailedException(JMSException):
    """The peer refused a sent message (``rejected``, ``released`` or ``modified`` outcome)."""


class JMSRuntimeException(_JMSError, RuntimeError):
    """Root of the unchecked JMS exceptions raised by the simplified API (JMSContext)."""


class IllegalStateRuntimeException(JMSRuntimeException):
    """The unchecked form of ``IllegalStateException`` (JMSContext raises these)."""


class InvalidClientIDRuntimeException(JMSRuntimeException):
    """The unchecked form of ``InvalidClientIDException`` (JMSContext raises these)."""


class InvalidDestinationRuntimeException(JMSRuntimeException):
    """The unchecked form of ``InvalidDestinationException`` (JMSContext raises these)."""


class InvalidSelectorRuntimeException(JMSRuntimeException):
    """The unchecked form of ``InvalidSelectorException`` (JMSContext raises these)."""


class JMSSecurityRuntimeException(JMSRuntimeException):
    """The unchecked form of ``JMSSecurityException`` (JMSContext raises these)."""


class MessageFormatRuntimeException(JMSRuntimeException):
    """The unchecked form of ``MessageFormatException`` (JMSContext raises these)."""


class MessageNotWriteableRuntimeException(JMSRuntimeException):
    """The unchecked form of ``MessageNotWriteableException`` (JMSContext raises these)."""


class ResourceAllocationRuntimeException(JMSRuntimeException):
    """The unchecked form of ``ResourceAllocationException`` (JMSContext raises these)."""


class TransactionInProgressRuntimeException(JMSRuntimeException):
    """The unchecked form of ``TransactionInProgressException`` (JMSContext raises these)."""


class TransactionRolledBackRuntimeException(JMSRuntimeException):
    """The unchecked form of ``TransactionRolledBackException`` (JMSContext raises these)."""


class NumberFormatException(ValueError):
    """Java's NumberFormatException: a string value does not parse as the number asked for.

    Deliberately not a MessageFormatException: the JMS conversion tables say a String that does
    not parse raises NumberFormatException, which is not a JMSException in Java either.
    """


_RUNTIME_TWINS: dict[type[JMSException], type[JMSRuntimeException]] = {
    IllegalStateException: IllegalStateRuntimeException,
    TransactionInProgressException: TransactionInProgressRuntimeException,
    InvalidClientIDException: InvalidClientIDRuntimeException,
    InvalidDestinationException: InvalidDestinationRuntimeException,
    InvalidSelectorException: InvalidSelectorRuntimeException,
    JMSSecurityException: JMSSecurityRuntimeException,
    MessageFormatException: MessageFormatRuntimeException,
    MessageNotWriteableException: MessageNotWriteableRuntimeException,
    ResourceAllocationException: ResourceAllocationRuntimeException,
    TransactionRolledBackException: TransactionRolledBackRuntimeException,
}


def to_runtime(exc: JMSException) -> JMSRuntimeException:
    """The unchecked twin of a checked JMS exception, as the simplified API raises it."""
    for cls in type(exc).__mro__:
        twin = _RUNTIME_TWINS.get(cls)
        if twin is not None:
            return twin(exc.reason, exc.error_code, exc)
    return JMSRuntimeException(exc.reason, exc.error_code, exc)
