"""Reading a request message sent to one of the broker's service nodes (``$management``,
``$cbs``) within the limits a requester controls: its size (``management_request_size``) and
its nesting (``max_value_depth``, checked before proton recurses into it)."""

from __future__ import annotations

from proton import Message

from ..limits import BrokerLimits
from .depth import check_depth

__all__ = ["RequestRefused", "decode_request"]


class RequestRefused(Exception):
    """The request cannot be read: reject its delivery with ``condition`` and ``description``."""

    def __init__(self, condition: str, description: str) -> None:
        super().__init__(description)
        self.refusal = (condition, description)


def decode_request(data: bytes, limits: BrokerLimits, node: str) -> Message:
    if limits.management_request_size and len(data) > limits.management_request_size:
        raise RequestRefused("amqp:resource-limit-exceeded", f"{node} request of {len(data)} bytes exceeds "
                             f"the limit of {limits.management_request_size} (management_request_size)")
    request = Message()
    try:
        if limits.max_value_depth:
            check_depth(data, limits.max_value_depth)
        request.decode(data)
    except Exception as exc:
        raise RequestRefused("amqp:decode-error", f"{node} request could not be decoded: {exc}") from None
    return request
