"""The C reader of incoming folders (``_mqxml``) against expat: whatever it accepts, ElementTree
reads the same way (and whatever expat refuses, it refuses); the folders ``to_mq`` writes take it;
no input makes it read out of bounds; and the incoming fast path gives the same messages with it
and without it (``AMQP_JMS_NO_ACCEL=1``)."""

from __future__ import annotations

import struct
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_mq_fast_incoming import check, common, state
from test_mq_hypothesis import messages

from amqp_jms.destination import Queue
from amqp_jms.message import MapMessage, Message, StreamMessage, TextMessage
from amqp_jms.message._data import view
from amqp_jms.mq import MQMD, _fastin, from_mq_bytes, to_mq
from amqp_jms.testing.messages import with_fields, with_properties
from amqp_jms.types import Int

try:
    from amqp_jms.mq import _mqxml
except ImportError:  # not built: the ElementTree path is all there is
    _mqxml = None  # type: ignore[assignment]

needs_accel = pytest.mark.skipif(_mqxml is None, reason="the C accelerator _mqxml was not built")
SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def expat(data: bytes) -> Any:
    """What ElementTree reads from ``data`` in the accelerator's terms, "error" if expat refuses
    it, "other" if it is well-formed but not a flat folder."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError:
        return "error"
    if root.attrib or (root.text or "").strip() or (root.tail or "").strip():
        return "other"
    children = []
    for c in root:
        if len(c) or (c.tail or "").strip():
            return "other"
        children.append((c.tag, c.text, dict(c.attrib) or None))
    return root.tag, children


def agree(data: bytes) -> Any:
    got = _mqxml.parse(data)
    if got is not None:
        assert expat(data) == got, data
    return got


# ---- documents: flat folders built from pieces, some of them wrong
NAMES = st.sampled_from(["jms", "usr", "Dst", "Tms", "a", "_x", "x.y", "b-1", "elt", "A9", "xml", "xmlns"])
BAD_NAMES = st.sampled_from(["xsi:nil", "1a", "", "é", "a b", "-a"])
TEXT_PIECES = st.sampled_from(
    [
        "plain", " ", "\t", "\n", "\r", "\r\n", "é", "€", "😀", "&lt;", "&gt;", "&amp;", "&quot;", "&apos;",
        "&#65;", "&#x41;", "&#x1F600;", "&#0;", "&#xD800;", "&#xFFFE;", "&#x110000;", "&#9;", "&#10;",
        "&#13;", "&bogus;", "&", "&#;", "&#x;", "&lt", "<", ">", "]]>", "]]", "\x00", "\x01", "\x7f",
        "\ufffe", "\uffff", "\ufdd0", "'", '"', "=", "/", "<!--c-->", "<![CDATA[x]]>", "<?pi?>", "<b/>",
        "0123456789",
    ]
)  # fmt: skip
TEXTS = st.lists(TEXT_PIECES, max_size=6).map("".join)
QUOTES = st.sampled_from(['"', "'"])


@st.composite
def attribute(draw: st.DrawFn) -> str:
    name = draw(st.one_of(NAMES, BAD_NAMES)) if draw(st.integers(0, 9)) == 0 else draw(NAMES)
    q = draw(QUOTES)
    eq = draw(st.sampled_from(["=", " = ", "=\n"]))
    return f"{name}{eq}{q}{draw(TEXTS)}{q}"


@st.composite
def child(draw: st.DrawFn) -> str:
    name = draw(NAMES) if draw(st.integers(0, 19)) else draw(BAD_NAMES)
    attrs = draw(st.lists(attribute(), max_size=3))
    head = name + "".join(" " + a for a in attrs)
    if draw(st.booleans()) and draw(st.booleans()):
        return f"<{head}/>"
    end = name if draw(st.integers(0, 19)) else draw(NAMES)
    return f"<{head}>{draw(TEXTS)}</{end}{draw(st.sampled_from(['', ' ', chr(10)]))}>"


@st.composite
def document(draw: st.DrawFn) -> bytes:
    root = draw(NAMES)
    gaps = st.sampled_from(["", "", " ", "\n  ", "x", "\r\n"])
    inner = "".join(draw(gaps) + draw(child()) for _ in range(draw(st.integers(0, 5))))
    doc = f"{draw(gaps)}<{root}>{inner}{draw(gaps)}</{root}>{draw(gaps)}"
    return doc.encode("utf-8", "surrogatepass")


@needs_accel
@SETTINGS
@given(document())
def test_whatever_the_c_reader_accepts_expat_reads_the_same(doc: bytes) -> None:
    agree(doc)


@needs_accel
@SETTINGS
@given(
    document(),
    st.integers(0, 10**6),
    st.binary(min_size=0, max_size=2),
    st.sampled_from(["ins", "del", "set"]),
)
def test_mutated_documents_still_agree(doc: bytes, where: int, junk: bytes, how: str) -> None:
    i = where % (len(doc) + 1)
    if how == "ins":
        doc = doc[:i] + junk + doc[i:]
    elif how == "del":
        doc = doc[:i] + doc[i + 1 + len(junk) :]
    else:
        doc = doc[:i] + junk + doc[i + len(junk) :]
    agree(doc)


@needs_accel
def test_the_reader_reads_well_formed_flat_folders() -> None:
    got = agree(
        b"<usr><a>x &amp; y</a><b dt='i4'>3</b><c dt=\"r8\" >9.5</c><d/><e></e>\n"
        b"<f name='k&#x20AC;' dt='string'>&#65;&lt;&gt;&quot;&apos;</f><g>caf\xc3\xa9</g></usr>"
    )
    assert got == (
        "usr",
        [
            ("a", "x & y", None),
            ("b", "3", {"dt": "i4"}),
            ("c", "9.5", {"dt": "r8"}),
            ("d", None, None),
            ("e", None, None),
            ("f", "A<>\"'", {"name": "k€", "dt": "string"}),
            ("g", "café", None),
        ],
    )
    assert agree(b"<a><b x='1\t2\n3'>t\tu\nv</b></a>") == ("a", [("b", "t\tu\nv", {"x": "1 2 3"})])
    assert _mqxml.parse("<a><b>str in</b></a>") == ("a", [("b", "str in", None)])


@needs_accel
@pytest.mark.parametrize(
    "doc",
    [
        b"<a><b>x</b>",  # unclosed root
        b"<a><b>x</c></a>",  # mismatched end
        b"<a><b>x</b></a><c/>",  # two roots
        b"<a><b>1 < 2</b></a>",
        b"<a><b>&nbsp;</b></a>",  # undefined entity
        b"<a><b>&#0;</b></a>",
        b"<a><b>]]></b></a>",
        b"<a><b x='1' x='2'/></a>",  # repeated attribute
        b"<a><b x=1/></a>",  # unquoted
        b"<a><b x='<'/></a>",
        b"<a><b>\xff</b></a>",  # not UTF-8
        b"<a><b>\xef\xbf\xbe</b></a>",  # U+FFFE
        b"<a><b>\x00</b></a>",
    ],
)
def test_the_reader_refuses_what_expat_refuses(doc: bytes) -> None:
    assert expat(doc) == "error"
    assert _mqxml.parse(doc) is None


@needs_accel
@pytest.mark.parametrize(
    "doc",
    [
        b"<a xmlns:xsi='u'><b xsi:nil='true'/></a>",  # namespaces
        b"<a><b><c/></b></a>",  # nested
        b"<a>text<b/></a>",  # text in the root
        b"<a x='1'><b/></a>",  # attributes on the root
        b"<a><!-- c --><b/></a>",
        b"<a><b><![CDATA[x]]></b></a>",
        b"<a><b>x\r\ny</b></a>",  # line ends expat normalises
    ],
)
def test_the_reader_leaves_other_well_formed_shapes_to_elementtree(doc: bytes) -> None:
    assert expat(doc) != "error"
    assert _mqxml.parse(doc) is None


def rfh2_folders(raw: bytes) -> tuple[int, int, bool]:
    md, _ = MQMD.unpack(raw)
    little = md.encoding & 15 == 2
    (length,) = struct.unpack_from("<i" if little else ">i", raw, 364 + 8)
    return 400, 364 + length, little


@needs_accel
@pytest.mark.parametrize("encoding", ["native", "big"])
@pytest.mark.parametrize("m", common(), ids=lambda m: type(m).__name__)
def test_what_to_mq_writes_takes_the_c_reader(m: Message, encoding: str) -> None:
    # xsi:nil is left to ElementTree
    m = with_fields(m, properties={k: v for k, v in view(m).properties.items() if k != "nil"})
    raw = to_mq(m, encoding=encoding).to_bytes()
    got = _mqxml.folders(raw, *rfh2_folders(raw))
    assert got is not None
    mcd, jms, usr, _ajms = got
    assert mcd.startswith(b"<mcd><Msd>")
    assert jms["Dst"] == ("Dst", "topic://prices", None)
    assert jms["Tms"] == ("Tms", "1763740800123", None)
    assert usr is not None and ("qty", "3", {"dt": "i4"}) in usr


@needs_accel
def test_the_first_jms_element_of_a_name_wins() -> None:
    m = TextMessage("x")
    m.set_jms_timestamp(5)
    raw = bytearray(to_mq(m).to_bytes())
    i = raw.index(b"<Tms>5</Tms>")
    raw[i : i + 12] = b"<Tm>5</Tm>  "  # keeps the folder's length; now no Tms
    got = _mqxml.folders(bytes(raw), *rfh2_folders(bytes(raw)))
    assert got is not None and "Tms" not in got[1]
    doubled = _mqxml.parse(b"<jms><Pri>1</Pri><Pri>2</Pri></jms>")
    assert doubled == ("jms", [("Pri", "1", None), ("Pri", "2", None)])


@needs_accel
@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=600), st.integers(-5, 700), st.integers(-5, 700), st.booleans())
def test_folders_never_reads_out_of_bounds(raw: bytes, pos: int, end: int, little: bool) -> None:
    got = _mqxml.folders(raw, pos, end, little)
    assert got is None or isinstance(got, tuple)


@needs_accel
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 80), st.binary(max_size=60)), max_size=5), st.booleans())
def test_folders_with_lying_lengths_are_declined_or_read_exactly(
    pairs: list[tuple[int, bytes]], little: bool
) -> None:
    fmt = "<i" if little else ">i"
    raw = b"".join(struct.pack(fmt, n) + data for n, data in pairs)
    got = _mqxml.folders(raw, 0, len(raw), little)
    assert got is None or isinstance(got[1], dict)


# ---- the fast path, with the accelerator and without
@pytest.fixture(params=["c", "elementtree"])
def reader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "c" and _mqxml is None:
        pytest.skip("the C accelerator _mqxml was not built")
    monkeypatch.setattr(_fastin, "_ACCEL", _mqxml if request.param == "c" else None)
    yield request.param


@pytest.mark.parametrize("encoding", ["native", "big"])
def test_the_common_shapes_read_the_same_on_both_readers(reader: str, encoding: str) -> None:
    for m in common():
        raw = to_mq(m, encoding=encoding).to_bytes()
        fast = check(raw)  # equal to the general path's message
        assert fast is not None
        assert state(from_mq_bytes(raw)) == state(fast)


def test_typed_usr_values_and_bodies_on_both_readers(reader: str) -> None:
    m = MapMessage({"k<&>": "v&'\"", "n": Int(-5), "f": 1.5e300, "t": True, "h": b"\x00\xff"})
    m.set_jms_timestamp(7)
    m.set_jms_reply_to(Queue("R"))
    m = with_properties(m, {"s": "a&b<c>", "i": Int(2**31 - 1), "u": "é€😀", "nil": None})
    got = check(to_mq(m).to_bytes())
    assert got is not None
    assert view(got).body == view(m).body  # type: ignore[attr-defined]
    assert {k: view(got).properties[k] for k in view(m).properties} == view(m).properties
    s = StreamMessage(["x<y", Int(1), None, b"\x01"])
    s.set_jms_timestamp(7)
    got = check(to_mq(s).to_bytes())
    assert got is not None and view(got).body == view(s).body  # type: ignore[attr-defined]


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(messages(), st.sampled_from(["native", "big"]))
def test_any_message_reads_the_same_on_both_readers(reader: str, m: Message, encoding: str) -> None:
    check(to_mq(m, encoding=encoding).to_bytes())


CLEAN_NAMES = st.sampled_from(["jms", "usr", "Dst", "Tms", "a", "_x", "x.y", "b-1", "elt", "A9", "xml"])
CLEAN_TEXTS = st.lists(
    st.sampled_from(
        [
            "plain", " ", "\t", "\n", "é", "€", "😀", "&lt;", "&gt;", "&amp;", "&quot;", "&apos;", "&#65;",
            "&#x41;", "&#x1F600;", "&#9;", "&#10;", "&#13;", "]]", ">", "'", "=", "\x7f", "\ufdd0", "0.5",
        ]
    ),
    max_size=6,
).map("".join).filter(lambda t: "]]>" not in t)  # fmt: skip


@st.composite
def clean_document(draw: st.DrawFn) -> tuple[bytes, int]:
    """A well-formed flat folder in the shape the reader takes, with its number of children."""
    kids = []
    for _ in range(draw(st.integers(0, 6))):
        name = draw(CLEAN_NAMES)
        attrs = draw(st.dictionaries(CLEAN_NAMES, CLEAN_TEXTS.filter(lambda t: "'" not in t), max_size=3))
        head = name + "".join(f" {k}{draw(st.sampled_from(['=', ' = ']))}'{v}'" for k, v in attrs.items())
        text = draw(CLEAN_TEXTS)
        kids.append(f"<{head}/>" if not text and draw(st.booleans()) else f"<{head}>{text}</{name}>")
    root = draw(CLEAN_NAMES)
    gap = draw(st.sampled_from(["", " ", "\n  "]))
    return f"<{root}>{gap}{gap.join(kids)}{gap}</{root}>".encode(), len(kids)


@needs_accel
@SETTINGS
@given(clean_document())
def test_well_formed_flat_folders_are_all_read_and_read_as_expat_does(doc: tuple[bytes, int]) -> None:
    data, n = doc
    got = agree(data)
    assert got is not None, data
    assert len(got[1]) == n
