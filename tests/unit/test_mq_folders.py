"""RFH2 folder XML: IBM dt types, nil, escaping, usr name rules, map/stream bodies, CCSIDs."""

from __future__ import annotations

import math

import pytest

from amqp_jms.mq import MQFormatError
from amqp_jms.mq.bodies import (
    ccsid_from_charset,
    decode_map,
    decode_stream,
    decode_text,
    encode_map,
    encode_stream,
    encode_text,
)
from amqp_jms.mq.xmlfolder import check_usr_name, decode_value, element, parse_folder
from amqp_jms.types import Byte, Char, Float, Int, Short


def usr_values(xml: str) -> dict[str, object]:
    root = parse_folder(xml)
    return {
        el.name: decode_value(el.attrs.get("dt"), el.text, el.attrs.get("xsi:nil") == "true")
        for el in root.children
    }


def test_every_ibm_data_type_reads_with_its_jms_type() -> None:
    got = usr_values(
        "<usr><s>text</s><s2 dt='string'>t</s2><b dt='boolean'>1</b><f dt='boolean'>0</f>"
        "<i1 dt='i1'>-128</i1><i2 dt='i2'>32767</i2><i4 dt='i4'>-5</i4><i8 dt='i8'>9223372036854775807</i8>"
        "<n dt='int'>42</n><r4 dt='r4'>1.5</r4><r8 dt='r8'>-2.5E10</r8><h dt='bin.hex'>00FFa0</h></usr>"
    )
    assert got == {"s": "text", "s2": "t", "b": True, "f": False, "i1": -128, "i2": 32767, "i4": -5,
                   "i8": 2**63 - 1, "n": 42, "r4": 1.5, "r8": -2.5e10, "h": b"\x00\xff\xa0"}  # fmt: skip
    assert type(got["i1"]) is Byte and type(got["i2"]) is Short and type(got["i4"]) is Int
    assert type(got["i8"]) is int and type(got["r4"]) is Float and type(got["r8"]) is float


def test_both_quote_styles_and_nil() -> None:
    got = usr_values(
        """<usr><a dt="i4">1</a><b dt='i4'>2</b><c xsi:nil='true'></c><d xsi:nil="true"/></usr>"""
    )
    assert got == {"a": 1, "b": 2, "c": None, "d": None}


@pytest.mark.parametrize(
    "value",
    [True, False, Byte(-3), Short(300), Int(-70000), 2**40, Float(1.25), 0.1, -0.0, "a<b&c>\"d'", "",
     "line\r\nbreak\ttab", b"\x00\x01", None, "é€😀"],
)  # fmt: skip
def test_typed_values_round_trip_through_xml(value: object) -> None:
    got = usr_values("<usr>" + element("v", value, "v") + "</usr>")["v"]
    assert got == value and type(got) is type(value)


def test_special_floats() -> None:
    for v in (math.inf, -math.inf):
        assert usr_values("<usr>" + element("v", v, "v") + "</usr>")["v"] == v
    assert math.isnan(usr_values("<usr>" + element("v", math.nan, "v") + "</usr>")["v"])  # type: ignore[arg-type]
    assert element("v", math.inf, "v") == '<v dt="r8">Infinity</v>'


def test_entities_are_escaped_on_write() -> None:
    assert element("v", "<&>", "v") == "<v>&lt;&amp;&gt;</v>"
    assert usr_values("<usr><v>&lt;&amp;&gt;&quot;&apos;&#65;</v></usr>")["v"] == "<&>\"'A"


def test_xml_illegal_characters_are_refused_clearly() -> None:
    with pytest.raises(MQFormatError, match="U\\+0001"):
        element("v", "a\x01", "v")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("<usr><a dt='i1'>128</a></usr>", "not an i1"),
        ("<usr><a dt='i4'>1.5</a></usr>", "not an i4"),
        ("<usr><a dt='boolean'>yes</a></usr>", "not a boolean"),
        ("<usr><a dt='bin.hex'>0g</a></usr>", "non-hexadecimal"),
        ("<usr><a dt='r8'>1_0</a></usr>", "not a number"),
        ("<usr><a dt='date'>x</a></usr>", "unknown data type"),
    ],
)
def test_bad_typed_values(text: str, match: str) -> None:
    with pytest.raises(MQFormatError, match=match):
        usr_values(text)


@pytest.mark.parametrize(
    "text",
    ["<usr><a>1</usr>", "<usr></usr><jms></jms>", "not xml", "<!DOCTYPE x [<!ENTITY e 'x'>]><usr>&e;</usr>"],
)
def test_malformed_folders_raise_mq_format_error(text: str) -> None:
    with pytest.raises(MQFormatError):
        parse_folder(text)


@pytest.mark.parametrize(
    ("name", "why"),
    [("JMSFoo", "starts with 'JMS'"), ("jms_x", "starts with 'JMS'"), ("and", "keyword"), ("Null", "keyword"),
     ("a.b", "XML element name"), ("a:b", "XML element name"), ("1a", "XML element name"), ("a$b", "XML")],
)  # fmt: skip
def test_usr_name_restrictions(name: str, why: str) -> None:
    with pytest.raises(MQFormatError, match=why):
        check_usr_name(name)


def test_good_usr_names_pass() -> None:
    for name in ("a", "_x", "orderId", "naïve", "x-y", "ANDROID"):
        check_usr_name(name)


def test_map_body_xml() -> None:
    entries = {
        "s": "v",
        "i": Int(1),
        "c": Char("x"),
        "b": b"\x01",
        "n": None,
        "f": Float(2.5),
        "l": 7,
        "t": True,
    }
    xml = encode_map(entries)
    assert xml.startswith('<map><elt name="s">v</elt><elt name="i" dt="i4">1</elt><elt name="c" dt="char">')
    assert decode_map(xml) == entries
    assert {k: type(v) for k, v in decode_map(xml).items()} == {k: type(v) for k, v in entries.items()}
    assert decode_map("<map><elt name='a &amp; b' dt='i2'>3</elt></map>") == {"a & b": Short(3)}


def test_stream_body_xml() -> None:
    items = ["a", Byte(1), Short(2), Int(3), 4, Float(5.5), 6.5, True, Char("c"), b"\xff", None]
    xml = encode_stream(items)
    assert xml.startswith('<stream><elt>a</elt><elt dt="i1">1</elt>')
    back = decode_stream(xml)
    assert back == items and [type(v) for v in back] == [type(v) for v in items]


def test_wrong_body_roots() -> None:
    with pytest.raises(MQFormatError, match="expected <map>"):
        decode_map("<stream/>")
    with pytest.raises(MQFormatError, match="without a name"):
        decode_map("<map><elt>1</elt></map>")


@pytest.mark.parametrize(
    ("ccsid", "raw"),
    [(1208, "héllo €".encode()), (819, b"h\xe9llo"), (1200, "hé".encode("utf-16-be")), (437, b"h\x82llo"),
     (1252, b"h\xe9llo \x80"), (37, b"\x88\x51\x93\x93\x96"), (500, b"\x88\x51\x93\x93\x96")],
)  # fmt: skip
def test_text_in_each_ccsid(ccsid: int, raw: bytes) -> None:
    text = decode_text(raw, ccsid)
    assert text.startswith("h") and encode_text(text, ccsid) == raw


def test_ebcdic_is_really_ebcdic() -> None:
    assert encode_text("HELLO", 37) == b"\xc8\xc5\xd3\xd3\xd6"


def test_unknown_ccsid_and_unencodable_text() -> None:
    with pytest.raises(MQFormatError, match="CCSID 9999"):
        decode_text(b"x", 9999)
    with pytest.raises(MQFormatError, match="cannot be written in CCSID 819"):
        encode_text("€", 819)
    with pytest.raises(MQFormatError, match="not valid in CCSID 1208"):
        decode_text(b"\xff", 1208)


def test_character_set_names() -> None:
    assert ccsid_from_charset("UTF-8") == 1208 and ccsid_from_charset("ISO-8859-1") == 819
    assert ccsid_from_charset("37") == 37 and ccsid_from_charset(Int(1252)) == 1252
    with pytest.raises(MQFormatError, match="JMS_IBM_Character_Set"):
        ccsid_from_charset("klingon")
