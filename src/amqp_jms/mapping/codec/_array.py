"""AMQP arrays: a list whose elements share one AMQP type.

An AMQP ``array`` differs from a ``list`` on the wire (one constructor for all elements), so a
received array must stay an array to re-encode to the same bytes. ``element_type`` is the Python
type of :mod:`amqp_jms.types` that stands for the element's AMQP type (``Int``, ``Symbol``,
``str``, ``list``, ``dict``, ``Array`` ...); ``descriptor`` is set for arrays of described values.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["Array"]


class Array(list[Any]):
    """A typed AMQP array. Equal to another only if element type and descriptor match too."""

    __slots__ = ("descriptor", "element_type")

    def __init__(self, element_type: type, items: Iterable[Any] = (), descriptor: Any = None) -> None:
        super().__init__(items)
        self.element_type = element_type
        self.descriptor = descriptor

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Array):
            return (
                self.element_type is other.element_type
                and self.descriptor == other.descriptor
                and list.__eq__(self, other)
            )
        return False

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None

    def __repr__(self) -> str:
        d = f", descriptor={self.descriptor!r}" if self.descriptor is not None else ""
        return f"Array({self.element_type.__name__}, {list.__repr__(self)}{d})"
