"""RFH2 folders read by the kept-open parser: what it accepts, what it refuses, and that a bad
folder never disturbs the next message's parse."""

from __future__ import annotations

import threading

import pytest

from amqp_jms.destination import Queue
from amqp_jms.message import Message
from amqp_jms.message._data import view
from amqp_jms.mq import MQMD, MQRFH2, MQFormatError, _folders, from_mq
from amqp_jms.types import Byte, Int


def message(*folders: str, body: bytes = b"") -> Message:
    r = MQRFH2(encoding=546, order="<")
    for f in folders:
        r.add_folder(f)
    return from_mq(MQMD(format="MQHRF2", encoding=546), r.pack() + body)


def jms(i: int) -> str:
    return f"<jms><Dst>queue:///Q{i}</Dst><Tms>{1000 + i}</Tms><Cid>c-{i}</Cid></jms>"


def check(m: Message, i: int) -> None:
    assert m.get_jms_destination() == Queue(f"Q{i}")
    assert m.get_jms_timestamp() == 1000 + i
    assert m.get_jms_correlation_id() == f"c-{i}"


MALFORMED = [
    "<jms><Tms>1</Tms>",  # unclosed
    "<jms><Tms>1</jms>",  # mismatched
    "<jms/></m>",  # closes the parser's own wrapper
    "<jms/></m><m>",  # ... and opens another
    "<jms/></m></r>",  # ... and the outer element
    "</m></r><r><m><jms/>",
    "<jms/><jms/>",  # two roots
    "text<jms/>",  # text before
    "<jms/>text",  # text after
    "<jms/><!--",  # an open comment would swallow what follows
    "<jms><![CDATA[x",  # an open CDATA section
    "<jms/><?pi",  # an open processing instruction
    "<jms a='",  # an open attribute value
    "<jms><Tms>&amp</Tms></jms>",  # an unterminated reference
    "<jms><Tms>&foo;</Tms></jms>",  # an undefined entity
    "<!DOCTYPE jms [<!ENTITY e 'x'>]><jms><Tms>&e;</Tms></jms>",  # a DTD
    "<jms>]]></jms>",
    "<jms>\x01</jms>",
    "<jms></jms2>",
    "not xml",
]


@pytest.mark.parametrize("bad", MALFORMED)
def test_a_malformed_folder_is_refused_and_the_next_message_reads_correctly(bad: str) -> None:
    check(message(jms(1)), 1)
    with pytest.raises(MQFormatError):
        message(bad)
    for i in range(2, 5):  # the parser after the failure reads correctly, message after message
        check(message(jms(i)), i)


def test_a_malformed_folder_after_good_ones_in_the_same_header() -> None:
    with pytest.raises(MQFormatError):
        message("<mcd><Msd>jms_text</Msd></mcd>", jms(1), "<usr><a>1</usr>")
    check(message("<mcd><Msd>jms_text</Msd></mcd>", jms(2)), 2)


@pytest.mark.parametrize(
    "folder",
    [
        "<?xml version='1.0'?><jms><Tms>7</Tms></jms>",  # an XML declaration: a standalone document
        "<!-- note --><jms><Tms>7</Tms></jms>",  # a comment before the root
        "<jms><!-- c --><Tms>7</Tms><?pi x?></jms>",  # comments and PIs inside
        "  <jms><Tms>7</Tms></jms>\n",  # surrounding whitespace
        "<jms><Tms><![CDATA[7]]></Tms></jms>",
        "<jms><Tms>&#55;</Tms></jms>",  # a character reference
    ],
)
def test_well_formed_variants_read_as_a_standalone_parse_would(folder: str) -> None:
    assert message(folder).get_jms_timestamp() == 7
    check(message(jms(3)), 3)


def test_a_folder_in_another_namespace_is_not_the_jms_folder_and_is_kept() -> None:
    folder = "<x:jms xmlns:x='urn:x'><Tms>7</Tms></x:jms>"
    m = message(folder)
    assert m.get_jms_timestamp() == 0
    extra = view(m).extra
    assert extra is not None and extra["mq.folders"] == [folder.encode() + b" "]  # padded to 4


def test_an_undeclared_prefix_is_read_without_namespaces() -> None:
    m = message("<usr><a:b>1</a:b><c>2</c></usr>")
    assert m.get_string_property("c") == "2"
    check(message(jms(4)), 4)


def test_entities_cdata_quotes_attributes_nil_and_non_ascii_in_usr() -> None:
    m = message(
        "<usr><e>&lt;a&gt; &amp; &quot;b&quot; &apos;c&apos; &#233;&#x20AC;</e>"
        "<c><![CDATA[<not> & markup]]></c>"
        "<q1 dt='i4'>5</q1><q2 dt=\"i1\">-3</q2>"
        "<n xsi:nil='true'/><n2 xsi:nil=\"true\"></n2>"
        "<u>naïve € 😀</u><naïve>x</naïve></usr>"
    )
    assert m.get_string_property("e") == "<a> & \"b\" 'c' é€"
    assert m.get_string_property("c") == "<not> & markup"
    assert m.get_object_property("q1") == 5 and type(m.get_object_property("q1")) is Int
    assert m.get_object_property("q2") == -3 and type(m.get_object_property("q2")) is Byte
    assert m.property_exists("n") and m.get_object_property("n") is None
    assert m.property_exists("n2") and m.get_object_property("n2") is None
    assert m.get_string_property("u") == "naïve € 😀"
    assert m.get_string_property("naïve") == "x"


def test_jms_folder_with_typed_and_nil_elements() -> None:
    m = message("<jms><Tms dt='i8'>12</Tms><Pri dt='i4'> 3 </Pri><Cid xsi:nil='true'/></jms>")
    assert m.get_jms_timestamp() == 12 and m.get_jms_priority() == 3
    with pytest.raises(MQFormatError, match="Tms"):
        message("<jms><Tms>soon</Tms></jms>")


def test_parsers_are_retired_and_pooled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_folders, "_USES", 3)
    monkeypatch.setattr(_folders, "_POOL", [])
    for i in range(10):
        check(message(jms(i)), i)
    assert len(_folders._POOL) <= 1


def test_threads_never_share_a_parser() -> None:
    errors: list[BaseException] = []

    def worker(base: int) -> None:
        try:
            for i in range(base, base + 300):
                check(message(jms(i)), i)
                if i % 50 == 0:
                    with pytest.raises(MQFormatError):
                        message("<jms><Tms>1</Tms>")
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k * 1000,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_a_parser_that_read_a_big_folder_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_folders, "_POOL", [])
    big = "<usr><big>" + "x" * 70_000 + "</big></usr>"
    m = message(big)
    assert m.get_string_property("big") == "x" * 70_000
    assert _folders._POOL == []  # its 70 kB buffer went with it
    check(message(jms(5)), 5)
    assert len(_folders._POOL) == 1
