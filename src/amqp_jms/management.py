"""AMQP Management requests over the JMS client: what the management verbs send and read back.

A request is a JMS message to the queue ``$management`` with the application properties
``operation``, ``type``, ``name`` (and the operation's own); ``JMSReplyTo`` is a temporary queue of
this session, and the answer is the message there whose ``JMSCorrelationID`` is the request's
``JMSMessageID``, with ``statusCode`` and ``statusDescription`` properties. Any broker with a
``$management`` node answering these conventions can be driven this way (see docs/operations.md).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from .destination import Queue
from .exceptions import InvalidDestinationException, JMSException, JMSSecurityException
from .message._plain import message_body

__all__ = ["NODE_TYPE", "ManagementClient", "Response", "StatusError"]

NODE_TYPE = "org.amqp.management"
ADDRESS = "$management"


class StatusError(JMSException):
    """The node answered with an error status other than 401/403/404; the message is its reason."""


@dataclass(frozen=True)
class Response:
    status: int
    description: str
    body: Any
    properties: dict[str, Any]

    def rows(self) -> list[dict[str, Any]]:
        """A QUERY answer as one dict per entity."""
        body = self.body if isinstance(self.body, dict) else {}
        names = [str(n) for n in body.get("attributeNames") or []]
        return [dict(zip(names, row, strict=False)) for row in body.get("results") or []]


class ManagementClient:
    """Requests to ``$management`` on one JMS session (a temporary reply queue of its own)."""

    def __init__(self, connection: Any, *, timeout: float = 30.0) -> None:
        self._session = connection.create_session()
        self._reply_to = self._session.create_temporary_queue()
        self._producer = self._session.create_producer(Queue(ADDRESS))
        self._consumer = self._session.create_consumer(self._reply_to)
        self.timeout = timeout

    def request(self, operation: str, type_name: str, name: str | None = None, *,
                properties: dict[str, Any] | None = None, body: dict[str, Any] | None = None,
                check: bool = True) -> Response:
        """Send one request and wait for its answer; an error status raises (unless ``check`` is
        false) ``JMSSecurityException`` for 401/403, ``InvalidDestinationException`` for 404, else
        :class:`StatusError`, with the node's description and ``status <code>`` as error code."""
        session = self._session
        # a body is an AMQP map (amqp-value), as the draft has it: an ObjectMessage of a dict
        msg = session.create_message() if body is None else session.create_object_message(body)
        msg.set_string_property("operation", operation)
        msg.set_string_property("type", type_name)
        if name is not None:
            msg.set_string_property("name", name)
        for k, v in (properties or {}).items():
            msg.set_object_property(k, v)
        msg.set_jms_reply_to(self._reply_to)
        self._producer.send(msg)
        request_id = msg.get_jms_message_id()
        deadline = time.monotonic() + self.timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise JMSException(f"no answer from {ADDRESS} to {operation} within {self.timeout:g} s")
            reply = self._consumer.receive(max(1, int(left * 1000)))
            if reply is None:
                continue
            if reply.get_jms_correlation_id() != request_id:
                continue  # an answer to an earlier request that timed out
            return self._response(reply, check)

    @staticmethod
    def _response(reply: Any, check: bool) -> Response:
        props = {n: reply.get_object_property(n) for n in reply.get_property_names()}
        status = props.get("statusCode")
        description = str(props.get("statusDescription") or "")
        if not isinstance(status, int):
            raise JMSException(f"the answer from {ADDRESS} has no statusCode: not an AMQP Management node?")
        resp = Response(int(status), description, message_body(reply), props)
        if check and not 200 <= resp.status < 300:
            cls: type[JMSException] = StatusError
            if resp.status in (401, 403):
                cls = JMSSecurityException
            elif resp.status == 404:
                cls = InvalidDestinationException
            raise cls(description or f"status {resp.status}", f"status {resp.status}")
        return resp

    @property
    def reply_queue(self) -> str:
        """The temporary queue answers come to (its consumer is this client's own)."""
        return str(self._reply_to.get_queue_name())

    def query(self, entity_type: str, attributes: list[str] | None = None, *, page: int = 1000) -> list[
            dict[str, Any]]:
        """Every entity of a type (paged with ``offset``/``count`` until a short page)."""
        rows: list[dict[str, Any]] = []
        while True:
            resp = self.request("QUERY", NODE_TYPE, "self",
                                properties={"entityType": entity_type, "offset": len(rows), "count": page},
                                body={"attributeNames": attributes} if attributes else None)
            got = resp.rows()
            rows.extend(got)
            if len(got) < page or not got:
                return rows

    def close(self) -> None:
        try:
            self._consumer.close()
            self._reply_to.delete()
        finally:
            self._session.close()

    def __enter__(self) -> ManagementClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
