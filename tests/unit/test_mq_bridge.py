"""MQ <-> AMQP bridge: the JMS view survives MQ -> AMQP -> MQ and AMQP -> MQ -> AMQP."""

from __future__ import annotations

import pytest
from mq_samples import six, view

from amqp_jms import mapping
from amqp_jms.message import BytesMessage, Message
from amqp_jms.message._data import view as data_of
from amqp_jms.mq import MQMD, MQRFH2, amqp_to_mq, from_mq, mq_to_amqp, to_mq
from amqp_jms.testing.messages import with_fields
from amqp_jms.types import Int


def messages() -> list[Message]:
    out = six()
    return [with_fields(m, body=b"\x00bridge\xff") if isinstance(m, BytesMessage) else m for m in out]


@pytest.mark.parametrize("index", range(6))
def test_amqp_mq_amqp(index: int) -> None:
    amqp = mapping.encode(messages()[index])
    mq = amqp_to_mq(amqp)
    back = mapping.decode(mq_to_amqp(mq.md, mq.data))
    assert view(back) == view(mapping.decode(amqp))


@pytest.mark.parametrize("index", range(6))
@pytest.mark.parametrize("encoding", ["native", "big"])
def test_mq_amqp_mq(index: int, encoding: str) -> None:
    mq = to_mq(messages()[index], encoding=encoding, queue_manager="QM1")
    again = amqp_to_mq(mq_to_amqp(mq.md, mq.data), encoding=encoding)
    after, before = view(from_mq(again.md, again.data)), view(from_mq(mq.md, mq.data))
    # amqp_jms.mapping's decoder reports every AMQP content-type as JMS_AMQP_CONTENT_TYPE, so a
    # BytesMessage that went through AMQP once carries application/octet-stream: its doing, not ours
    ct = after["props"].pop("JMS_AMQP_CONTENT_TYPE", None)
    assert ct in (None, (str, "application/octet-stream"))
    assert after == before


def test_plain_mq_message_from_a_c_application_bridges_as_text() -> None:
    md = MQMD(
        format="MQSTR", coded_char_set_id=819, persistence=1, priority=6, put_appl_type=6,
        put_appl_name="amqsput", user_identifier="mqm", msg_id=bytes(range(24)), backout_count=1,
    )  # fmt: skip
    m = mapping.decode(mq_to_amqp(md, "caf\xe9".encode("latin-1")))
    assert m.get_body(str) == "café" and m.get_jms_priority() == 6 and m.get_jms_delivery_mode() == 2
    assert m.get_jms_message_id() == "ID:" + bytes(range(24)).hex()
    assert m.get_string_property("JMSXUserID") == "mqm" and m.get_int_property("JMS_IBM_PutApplType") == 6


def test_bridge_keeps_usr_properties_typed() -> None:
    r = MQRFH2(encoding=546, format="", order="<")
    r.add_folder("<mcd><Msd>jms_bytes</Msd></mcd>")
    r.add_folder("<usr><n dt='i4'>7</n><s>x</s><f dt='r8'>0.5</f><nil xsi:nil='true'/></usr>")
    amqp = mq_to_amqp(MQMD(format="MQHRF2", put_appl_type=28), r.pack() + b"\x01")
    m = mapping.decode(amqp)
    assert data_of(m).properties["n"] == Int(7) and type(data_of(m).properties["n"]) is Int
    props = data_of(m).properties
    assert (props["s"], props["f"], props["nil"]) == ("x", 0.5, None)
