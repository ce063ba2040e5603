"""The one error type of ``amqp_jms.mq``: a malformed or inconsistent MQ structure.

It is a ``MessageFormatException`` because that is what JMS calls "the bytes do not make a
message"; it adds where the problem is (structure, field, byte offset) so a user looking at a
hex dump can find it. Every parser in this package raises only this for bad input.
"""

from __future__ import annotations

from ..exceptions import MessageFormatException

__all__ = ["MQFormatError"]


class MQFormatError(MessageFormatException):
    """Bad MQ input or an unrepresentable value, naming the structure, field and offset."""

    def __init__(
        self,
        reason: str,
        *,
        structure: str | None = None,
        field: str | None = None,
        offset: int | None = None,
    ) -> None:
        where = []
        if structure:
            where.append(structure + (f".{field}" if field else ""))
        elif field:
            where.append(field)
        if offset is not None:
            where.append(f"at offset {offset}")
        text = f"{' '.join(where)}: {reason}" if where else reason
        super().__init__(text, "MQFormatError")
        self.structure = structure
        self.field = field
        self.offset = offset
