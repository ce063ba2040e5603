"""``MQMessage``: an MQMD and the message data that follows it (RFH2 headers and body)."""

from __future__ import annotations

from typing import Any

from .constants import MQMD_LENGTH_1, MQMD_LENGTH_2
from .mqmd import MQMD, absorb_mqmde
from .rfh2 import ParsedData, parse_headers

__all__ = ["MQMessage"]


class MQMessage:
    """What an MQPUT sends: ``md`` and ``data`` (RFH2 chain + body). ``to_bytes()`` is the MQMD
    followed by the data, the layout of raw MQ message files and of ``from_mq_bytes``.

    ``to_mq`` may hand over the finished bytes with the MQMD's field values (``_assembled``):
    most senders only want ``to_bytes()``, so the ``MQMD`` object and the ``data`` slice are made
    on first use. Once ``md`` has been handed out (and may be changed) or ``data`` replaced, the
    finished bytes are dropped and ``to_bytes()`` packs what the fields say.
    """

    __slots__ = ("_args", "_data", "_md", "_raw")
    __match_args__ = ("md", "data")
    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value (as the dataclass was)

    _md: MQMD | None
    _data: bytes | None
    _raw: bytes | None  # MQMD + data, while neither can have changed
    _args: tuple[Any, ...]  # the MQMD's field values, while _md is None

    def __init__(self, md: MQMD, data: bytes) -> None:
        self._md = md
        self._data = data
        self._raw = None

    @classmethod
    def _assembled(cls, raw: bytes, args: tuple[Any, ...]) -> MQMessage:
        """A message from ``raw`` (MQMD + data) and the field values that MQMD was packed from."""
        self = cls.__new__(cls)
        self._md = self._data = None
        self._args = args
        self._raw = raw
        return self

    @property
    def md(self) -> MQMD:
        md = self._md
        if md is None:
            md = self._md = MQMD(*self._args)
            self._take_data()  # the caller may change md: to_bytes must pack it from now on
        return md

    @md.setter
    def md(self, value: MQMD) -> None:
        self._take_data()
        self._md = value

    @property
    def data(self) -> bytes:
        data = self._data
        if data is None:
            raw = self._raw
            assert raw is not None
            data = self._data = raw[MQMD_LENGTH_2 if self._args[0] >= 2 else MQMD_LENGTH_1 :]
        return data

    @data.setter
    def data(self, value: bytes) -> None:
        self._take_data()
        self._data = value

    def _take_data(self) -> None:
        """Keep ``data`` on its own and drop the finished bytes."""
        if self._raw is not None:
            self.data  # noqa: B018  # sliced off the finished bytes before they go
            self._raw = None
        if self._md is None:
            self._md = MQMD(*self._args)

    def to_bytes(self) -> bytes:
        """MQMD then data, the layout of MQ's raw message files and of ``from_mq_bytes``."""
        raw = self._raw
        if raw is not None:
            return raw
        md, data = self._md, self._data
        assert md is not None and data is not None  # both set whenever _raw is not
        return md.pack() + data

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, MQMessage)
        return (self.md, self.data) == (other.md, other.data)

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(md={self.md!r}, data={self.data!r})"

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
