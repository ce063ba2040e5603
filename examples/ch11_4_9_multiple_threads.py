"""JMS 2.0 11.4.9: receiving messages in multiple threads (two sessions, one connection).

With the simplified API the second ``JMSContext`` comes from the first one's
``create_context``, so both share the connection, each with its own session and thread.
"""

from __future__ import annotations

import sys
import time

from ch11_common import MyListener, run

from amqp_jms import ConnectionFactory, JMSContext, Queue, Session

N = 20


def _wait_all(*listeners: MyListener) -> None:
    deadline = time.monotonic() + 10
    while sum(len(x.texts) for x in listeners) < N and time.monotonic() < deadline:
        time.sleep(0.02)


def receive_messages_old(connection_factory: ConnectionFactory, inbound_queue: Queue) -> list[list[str]]:
    with connection_factory.create_connection() as connection:
        s1 = connection.create_session(Session.AUTO_ACKNOWLEDGE)
        message_consumer1 = s1.create_consumer(inbound_queue)
        message_listener1 = MyListener("One")
        message_consumer1.set_message_listener(message_listener1)
        s2 = connection.create_session(Session.AUTO_ACKNOWLEDGE)
        message_consumer2 = s2.create_consumer(inbound_queue)
        message_listener2 = MyListener("Two")
        message_consumer2.set_message_listener(message_listener2)
        connection.start()
        _wait_all(message_listener1, message_listener2)  # wait for messages to be received
        return [message_listener1.texts, message_listener2.texts]


def receive_messages_new(connection_factory: ConnectionFactory, inbound_queue: Queue) -> list[list[str]]:
    with connection_factory.create_context(JMSContext.AUTO_ACKNOWLEDGE) as context1, \
            context1.create_context(JMSContext.AUTO_ACKNOWLEDGE) as context2:
        consumer1 = context1.create_consumer(inbound_queue)
        message_listener1 = MyListener("One")
        consumer1.set_message_listener(message_listener1)
        consumer2 = context2.create_consumer(inbound_queue)
        message_listener2 = MyListener("Two")
        consumer2.set_message_listener(message_listener2)
        _wait_all(message_listener1, message_listener2)
        return [message_listener1.texts, message_listener2.texts]


def demo(url: str) -> list[int]:
    """N messages per form, shared between two listeners: how many each form received."""
    cf = ConnectionFactory(url + ("&" if "?" in url else "?") + "jms.prefetchPolicy.all=1")
    q = Queue("jms/inboundQueue")
    counts = []
    for form in (receive_messages_old, receive_messages_new):
        with cf.create_context() as ctx:
            p = ctx.create_producer()
            for i in range(N):
                p.send(q, f"m{i}")
        got = form(cf, q)
        counts.append(sum(len(t) for t in got))
    return counts


if __name__ == "__main__":
    sys.exit(run(demo))
