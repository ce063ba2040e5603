"""JMS 2.0 §9.4: create and unpack each message type (Text, Bytes, Map, Stream, Object).

    python examples/ch9_message_types.py [--url amqp://host:5672]
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from typing import Any

from amqp_jms import (
    BytesMessage,
    ConnectionFactory,
    MapMessage,
    ObjectMessage,
    Queue,
    StreamMessage,
    TextMessage,
)


@contextlib.contextmanager
def broker_url(url: str | None) -> Iterator[str]:
    if url is not None:
        yield url
        return
    from amqp_jms.broker import Broker

    with Broker(port=0) as broker:
        yield broker.url


def main(url: str | None = None) -> dict[str, Any]:
    with broker_url(url) as where, ConnectionFactory(where).create_connection() as connection:
        session = connection.create_session()
        queue = Queue("StockSource.types")
        producer = session.create_producer(queue)

        # 9.4.1 creating a TextMessage
        text = session.create_text_message()
        text.set_text("IBM 143.25")
        # 9.4.3 creating a BytesMessage
        stock_data = b"\x00IBM\x00\x8f"
        bytes_msg = session.create_bytes_message()
        bytes_msg.write_bytes(stock_data)
        # 9.4.5 creating a MapMessage
        map_msg = session.create_map_message()
        map_msg.set_string("Name", "IBM")
        map_msg.set_double("Value", 143.25)
        map_msg.set_long("Time", 1_700_000_000_000)
        map_msg.set_double("Diff", -0.75)
        map_msg.set_string("Info", "closing quote")
        # 9.4.7 creating a StreamMessage
        stream_msg = session.create_stream_message()
        stream_msg.write_string("IBM")
        stream_msg.write_double(143.25)
        stream_msg.write_long(1_700_000_000_000)
        # 9.4.9 creating an ObjectMessage (any AMQP-typed value)
        object_msg = session.create_object_message({"name": "IBM", "value": 143.25})
        for m in (text, bytes_msg, map_msg, stream_msg, object_msg):
            producer.send(m)

        consumer = session.create_consumer(queue)
        connection.start()
        out: dict[str, Any] = {}
        # 9.4.2 unpacking a TextMessage (get_text or get_body)
        t = consumer.receive(2000)
        assert isinstance(t, TextMessage)
        out["text"] = t.get_body(str)
        # 9.4.4 unpacking a BytesMessage
        b = consumer.receive(2000)
        assert isinstance(b, BytesMessage)
        body_length = b.get_body_length()
        buf = bytearray(body_length)
        b.read_bytes(buf)
        out["bytes"] = bytes(buf)
        # 9.4.6 unpacking a MapMessage
        mm = consumer.receive(2000)
        assert isinstance(mm, MapMessage)
        out["map"] = {
            "Name": mm.get_string("Name"),
            "Value": mm.get_double("Value"),
            "Time": mm.get_long("Time"),
            "Diff": mm.get_double("Diff"),
            "Info": mm.get_string("Info"),
        }
        # 9.4.8 unpacking a StreamMessage
        sm = consumer.receive(2000)
        assert isinstance(sm, StreamMessage)
        out["stream"] = [sm.read_string(), sm.read_double(), sm.read_long()]
        # 9.4.10 unpacking an ObjectMessage
        om = consumer.receive(2000)
        assert isinstance(om, ObjectMessage)
        out["object"] = om.get_object()
        for k, v in out.items():
            print(f"{k:7s} {v!r}")
        return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url")
    main(ap.parse_args().url)
