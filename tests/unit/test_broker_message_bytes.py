"""A large message is a mapped file (``broker/storage/large.py``): the broker's decodes of it read only
the sections before the body (``message_bytes.head``), and a redelivery rewrites only its header
(``message_bytes.header_rewrite``), the rest sent on unchanged from the file."""

from __future__ import annotations

import mmap
import tempfile

import pytest

from amqp_jms.broker.storage import message_bytes
from amqp_jms.mapping import decode, encode
from amqp_jms.mapping.codec import HEADER, decode_sections
from amqp_jms.message import BytesMessage


def mapped(data: bytes) -> mmap.mmap:
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.flush()
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def big() -> bytes:
    m = BytesMessage()
    m.write_bytes(b"b" * 300_000)
    m.set_string_property("color", "red")
    m.set_jms_priority(7)
    return encode(m)


def test_head_is_the_sections_before_the_body() -> None:
    data = big()
    head = message_bytes.head(mapped(data))
    assert data.startswith(head) and 0 < len(head) < 1000
    assert message_bytes.selector_view(mapped(data))["color"] == "red"


@pytest.mark.parametrize("count", [1, 5])
def test_header_rewrite_plus_the_rest_is_the_message_redelivered(count: int) -> None:
    data = big()
    view = mapped(data)
    header, at = message_bytes.header_rewrite(view, count)
    out = header + view[at:]
    assert out == message_bytes.with_delivery_count(data, count)
    m = decode(out)
    assert m.get_jms_redelivered() and m.get_int_property("JMSXDeliveryCount") == count + 1
    assert m.get_jms_priority() == 7 and m.get_string_property("color") == "red"
    assert m.get_body(bytes) == b"b" * 300_000


def test_header_rewrite_adds_a_header_when_there_is_none() -> None:
    data = big()
    bare = data[decode_sections(data).spans[HEADER][1]:]  # no header section
    header, at = message_bytes.header_rewrite(mapped(bare), 2)
    assert at == 0
    assert decode(header + bare).get_int_property("JMSXDeliveryCount") == 3
