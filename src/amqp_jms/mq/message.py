"""``MQMessage``: an MQMD and the message data that follows it (RFH2 headers and body)."""

from __future__ import annotations

from dataclasses import dataclass

from .mqmd import MQMD, absorb_mqmde
from .rfh2 import ParsedData, parse_headers

__all__ = ["MQMessage"]


@dataclass(slots=True)
class MQMessage:
    """What an MQPUT sends: ``md`` and ``data`` (RFH2 chain + body). ``to_bytes()`` is the MQMD
    followed by the data, the layout of raw MQ message files and of ``from_mq_bytes``."""

    md: MQMD
    data: bytes

    def to_bytes(self) -> bytes:
        """MQMD then data, the layout of MQ's raw message files and of ``from_mq_bytes``."""
        return self.md.pack() + self.data

    @classmethod
    def from_bytes(cls, raw: bytes) -> MQMessage:
        """Split raw bytes at the end of the MQMD without parsing the data, for tools that forward
        or store MQ messages as they are; ``from_mq_bytes`` is the JMS view."""
        md, _order = MQMD.unpack(raw)
        return cls(md, bytes(raw[md.length :]))

    def parse(self) -> ParsedData:
        """The RFH2 chain and body (an MQMDE after a version 1 MQMD is folded in first)."""
        from ._binary import byte_order

        md, skip = absorb_mqmde(self.md, self.data, byte_order(self.md.encoding, "MQMD"))
        return parse_headers(self.data[skip:], md.encoding, md.coded_char_set_id, md.format)
