"""The public surface of ``amqp_jms.mq``: what the issue's API promises, all exported."""

from __future__ import annotations

import amqp_jms.mq as mq
from amqp_jms.exceptions import JMSException, MessageFormatException


def test_all_is_complete_and_resolvable() -> None:
    promised = {"to_mq", "from_mq", "from_mq_bytes", "mq_to_amqp", "amqp_to_mq", "MQMessage", "MQMD", "MQMDE",
                "MQRFH2", "MQFormatError", "load_dump", "write_dump", "iter_dump"}  # fmt: skip
    assert promised <= set(mq.__all__)
    for name in mq.__all__:
        assert getattr(mq, name) is not None
    public = {n for n in vars(mq) if not n.startswith("_") and callable(getattr(mq, n))}
    assert public <= set(mq.__all__), public - set(mq.__all__)


def test_mq_format_error_is_a_message_format_exception() -> None:
    err = mq.MQFormatError("bad", structure="MQRFH2", field="StrucLength", offset=8)
    assert isinstance(err, MessageFormatException) and isinstance(err, JMSException)
    assert str(err).startswith("MQRFH2.StrucLength at offset 8: bad")
    assert (err.structure, err.field, err.offset) == ("MQRFH2", "StrucLength", 8)
