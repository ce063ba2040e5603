"""JMS 2.0 11.4.11: the request/reply pattern with a TemporaryQueue.

The requestor creates a temporary reply queue, has the request sent with ``JMSReplyTo`` set to
it (a separate context stands for the spec's separate transaction), and waits for the reply on
the same connection, as a temporary queue requires. The responder (the spec's message-driven
bean) is a message listener that answers to ``JMSReplyTo``.
"""

from __future__ import annotations

import sys
from typing import Any

from ch11_common import run

from amqp_jms import ConnectionFactory, Destination, Queue, Session, TemporaryQueue

REQUEST_QUEUE = Queue("jms/requestQueue")


# -- standard API ------------------------------------------------------------------------------
def send_request_old(cf: ConnectionFactory, request: str, reply_queue: TemporaryQueue) -> None:
    with cf.create_connection() as connection:
        session = connection.create_session()
        request_message = session.create_text_message(request)
        request_message.set_jms_reply_to(reply_queue)
        session.create_producer(REQUEST_QUEUE).send(request_message)


def request_reply_old(cf: ConnectionFactory, request: str) -> str | None:
    with cf.create_connection() as connection:
        session = connection.create_session()
        reply_queue = session.create_temporary_queue()
        send_request_old(cf, request, reply_queue)
        consumer = session.create_consumer(reply_queue)
        connection.start()
        reply = consumer.receive(5000)
        return None if reply is None else reply.get_body(str)


class RequestResponderOld:
    def __init__(self, cf: ConnectionFactory) -> None:
        self.cf = cf

    def on_message(self, message: Any) -> None:
        with self.cf.create_connection() as connection:
            session = connection.create_session(Session.AUTO_ACKNOWLEDGE)
            request = message.get_body(str)
            reply_destination: Destination = message.get_jms_reply_to()
            reply_message = session.create_text_message("Reply to: " + request)
            session.create_producer(reply_destination).send(reply_message)


# -- simplified API ----------------------------------------------------------------------------
def send_request_new(cf: ConnectionFactory, request: str, reply_queue: TemporaryQueue) -> None:
    with cf.create_context() as context:
        request_message = context.create_text_message(request)
        request_message.set_jms_reply_to(reply_queue)
        context.create_producer().send(REQUEST_QUEUE, request_message)


def request_reply_new(cf: ConnectionFactory, request: str) -> str | None:
    with cf.create_context() as context:
        reply_queue = context.create_temporary_queue()
        send_request_new(cf, request, reply_queue)
        consumer = context.create_consumer(reply_queue)
        return consumer.receive_body(str, 5000)


class RequestResponderNew:
    def __init__(self, cf: ConnectionFactory) -> None:
        self.cf = cf

    def on_message(self, message: Any) -> None:
        with self.cf.create_context() as context:
            request = message.get_body(str)
            reply_destination = message.get_jms_reply_to()
            reply_message = context.create_text_message("Reply to: " + request)
            context.create_producer().send(reply_destination, reply_message)


def demo(url: str) -> list[str | None]:
    """Run each responder as a listener and make one request with each API."""
    cf = ConnectionFactory(url)
    got = []
    for responder, request_reply in ((RequestResponderOld, request_reply_old),
                                     (RequestResponderNew, request_reply_new)):
        with cf.create_context() as mdb:
            mdb.create_consumer(REQUEST_QUEUE).set_message_listener(responder(cf))
            got.append(request_reply(cf, request_reply.__name__))
    return got


if __name__ == "__main__":
    sys.exit(run(demo))
