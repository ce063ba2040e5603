"""Strings as Java peers write them: ActiveMQ's JMS transformer (and other Java stacks) write a
supplementary character as its UTF-16 surrogate pair, each half a 3-byte sequence (CESU-8), and
U+0000 as ``C0 80`` (modified UTF-8), in map values and property strings where AMQP says UTF-8.
Every place a Java peer's string can arrive (property values, map and stream entries, text bodies,
ids, user-id) reads them as the right Python ``str``; a lone surrogate is a
``MessageFormatException`` naming where it was; nothing we send is ever written that way."""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amqp_jms.exceptions import MessageFormatException
from amqp_jms.mapping import decode, encode
from amqp_jms.mapping.codec import Properties, decode_sections, encode_sections
from amqp_jms.message import TextMessage
from amqp_jms.message._mutf8 import encode_modified_utf8
from amqp_jms.types import Byte, Symbol

EMOJI = "order \U0001f600 ok"
MSG_TYPE = Symbol("x-opt-jms-msg-type")


def _str(raw: bytes, wide: bool = False) -> bytes:
    """An AMQP string holding ``raw`` exactly (str8, or str32 when ``wide``)."""
    if wide or len(raw) > 255:
        return b"\xb1" + struct.pack(">I", len(raw)) + raw
    return b"\xa1" + bytes([len(raw)]) + raw


def _map(pairs: list[tuple[bytes, bytes]]) -> bytes:
    body = b"".join(k + v for k, v in pairs)
    return b"\xd1" + struct.pack(">II", len(body) + 4, 2 * len(pairs)) + body


def _list(items: list[bytes]) -> bytes:
    body = b"".join(items)
    return b"\xd0" + struct.pack(">II", len(body) + 4, len(items)) + body


def _message(app_props: bytes | None = None, body: bytes | None = None, msg_type: int | None = None,
             props: bytes | None = None) -> bytes:
    out = b""
    if msg_type is not None:
        out += encode_sections(message_annotations={MSG_TYPE: Byte(msg_type)})
    if props is not None:
        out += b"\x00\x53\x73" + props
    if app_props is not None:
        out += b"\x00\x53\x74" + app_props
    if body is not None:
        out += body
    return out


def _cesu(text: str) -> bytes:
    return encode_modified_utf8(text)


def test_property_value_in_cesu8_reads_as_the_character() -> None:
    m = decode(_message(_map([(_str(b"note"), _str(_cesu(EMOJI))), (_str(b"nul"), _str(_cesu("a\x00b")))])))
    assert m.get_string_property("note") == EMOJI
    assert m.get_string_property("nul") == "a\x00b"


def test_map_and_stream_entries_in_cesu8() -> None:
    amqp_value = b"\x00\x53\x77"
    m = decode(_message(body=amqp_value + _map([(_str(_cesu("k\U0001f680")), _str(_cesu(EMOJI), wide=True))]),
                        msg_type=2))
    assert m.get_string("k\U0001f680") == EMOJI
    seq = b"\x00\x53\x76"
    s = decode(_message(body=seq + _list([_str(_cesu(EMOJI)), _str(b"plain")]), msg_type=4))
    assert s.read_string() == EMOJI and s.read_string() == "plain"


def test_text_bodies_in_cesu8() -> None:
    amqp_value = b"\x00\x53\x77"
    assert decode(_message(body=amqp_value + _str(_cesu(EMOJI)), msg_type=5)).get_text() == EMOJI
    data = b"\x00\x53\x75\xa0" + bytes([len(_cesu(EMOJI))]) + _cesu(EMOJI)
    assert decode(_message(body=data, msg_type=5)).get_text() == EMOJI


def test_ids_and_user_id_in_cesu8() -> None:
    # properties: message-id, user-id (binary), to, subject, reply-to, correlation-id
    uid = _cesu("\U0001f464u")
    fields = [_str(_cesu("ID:\U0001f600-1")), b"\xa0" + bytes([len(uid)]) + uid, _str(b"q"),
              _str(_cesu(EMOJI)), b"\x40", _str(_cesu("ID:\U0001f600-0"))]
    m = decode(_message(props=_list(fields)))
    assert m.get_jms_message_id() == "ID:\U0001f600-1"
    assert m.get_jms_correlation_id() == "ID:\U0001f600-0"
    assert m.get_jms_type() == EMOJI
    assert m.get_string_property("JMSXUserID") == "\U0001f464u"


@pytest.mark.parametrize("raw", [b"\xed\xa0\x80", b"a\xed\xb0\x80b"])  # a lone high / low surrogate
def test_lone_surrogate_is_a_format_error_naming_the_property(raw: bytes) -> None:
    with pytest.raises(MessageFormatException, match=r"'note'.*lone surrogate"):
        decode(_message(_map([(_str(b"note"), _str(raw))])))


def test_lone_surrogate_in_a_text_body_names_the_body() -> None:
    data = b"\x00\x53\x75\xa0\x03\xed\xa0\x80"
    with pytest.raises(MessageFormatException, match=r"text body.*lone surrogate"):
        decode(_message(body=data, msg_type=5))
    with pytest.raises(MessageFormatException, match=r"application-properties section.*lone surrogate"):
        decode(_message(_map([(_str(b"\xed\xa0\x80"), _str(b"v"))])))


def test_malformed_bytes_are_still_refused() -> None:
    with pytest.raises(MessageFormatException, match="neither UTF-8 nor"):
        decode(_message(_map([(_str(b"k"), _str(b"\xff\xfe"))])))


def test_we_never_write_cesu8_nor_lone_surrogates() -> None:
    m = TextMessage(EMOJI)
    m.set_string_property("note", EMOJI)
    data = encode(m)
    assert EMOJI.encode() in data and _cesu(EMOJI) not in data  # standard 4-byte UTF-8
    bad = TextMessage("x")
    bad.set_string_property("note", "\ud800")
    with pytest.raises(MessageFormatException):
        encode(bad)


_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=200, deadline=None)
@given(_text, _text, st.booleans())
def test_every_decoder_path_agrees_on_java_and_standard_encodings(key: str, value: str, wide: bool) -> None:
    """The inline fast paths (map keys/values, list items) and the generic str8/str32 readers
    give the same ``str`` for UTF-8, CESU-8 and modified UTF-8 input."""
    got: list[Any] = []
    for enc in (str.encode, _cesu):
        k, v = enc(key), enc(value)
        app = _map([(_str(k, wide), _str(v, wide)), (_str(b"other"), _str(v))])
        s = decode_sections(_message(app, props=_list([_str(v, wide)])))
        assert s.properties is not None and isinstance(s.properties, Properties)
        got.append((s.application_properties, s.properties.message_id))
    expected = ({key: value, "other": value} if key != "other" else {"other": value}, value)
    assert got == [expected, expected]


def test_broker_selectors_read_java_strings_as_the_client_does() -> None:
    import time

    from amqp_jms.broker.routing.selectors import compile_selector
    from amqp_jms.broker.storage.message import BrokerMessage
    from amqp_jms.selector import Selector

    data = _message(_map([(_str(b"note"), _str(_cesu(EMOJI)))]))
    text = f"note = '{EMOJI}'"
    broker = compile_selector(text)
    assert broker is not None and broker(BrokerMessage.parse(data, now=time.time())) is True
    assert Selector(text).matches(decode(data)) is True


def _char(code_point: int) -> bytes:
    return b"\x73" + struct.pack(">I", code_point)


@pytest.mark.parametrize("code_point", [0xD83D, 0xDE00])  # a lone high / low surrogate
def test_a_java_char_holding_a_lone_surrogate_reads_as_java_reads_it(code_point: int) -> None:
    """ActiveMQ writes ``MapMessage.setChar('\\ud83d')`` as the AMQP char 0xD83D: the message
    is read (not refused and dead-lettered), the char is the one-character str Java reads, and
    it goes out again as the same char."""
    amqp_value = b"\x00\x53\x77"
    m = decode(_message(body=amqp_value + _map([(_str(b"c"), _char(code_point)), (_str(b"n"), _str(b"ok"))]),
                        msg_type=2))
    assert m.get_char("c") == chr(code_point) and len(m.get_char("c")) == 1
    assert m.get_string("c") == chr(code_point) and m.get_string("n") == "ok"
    again = decode(encode(m))
    assert again.get_char("c") == chr(code_point)
    assert _char(code_point) in encode(m)
    seq = b"\x00\x53\x76"
    s = decode(_message(body=seq + _list([_char(code_point), _str(b"plain")]), msg_type=4))
    assert s.read_char() == chr(code_point) and s.read_string() == "plain"


def test_a_char_past_the_last_code_point_is_still_refused() -> None:
    amqp_value = b"\x00\x53\x77"
    with pytest.raises(MessageFormatException, match="beyond U\\+10FFFF"):
        decode(_message(body=amqp_value + _map([(_str(b"c"), _char(0x110000))]), msg_type=2))


def test_set_char_takes_a_lone_surrogate_as_java_does_and_a_string_still_refuses_it() -> None:
    from amqp_jms.message import MapMessage

    m = MapMessage()
    m.set_char("c", "\ud83d")
    assert decode(encode(m)).get_char("c") == "\ud83d"
    m.set_string("s", "\ud83d")  # a String must be valid UTF-8 on the wire
    with pytest.raises(MessageFormatException):
        encode(m)
