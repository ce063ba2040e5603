"""Type stub of the optional C accelerator (``_mqxml.c``)."""

from typing import Any

#: (name, text or None, attributes or None)
Child = tuple[str, str | None, dict[str, str] | None]

def parse(data: bytes | str, /) -> tuple[str, list[Child]] | None:
    """One flat XML document (a root holding text-only elements): its root name and children;
    None when it is not of that shape or not well-formed (ElementTree then decides)."""

def folders(
    raw: Any, pos: int, end: int, little: bool, /
) -> tuple[bytes, dict[str, Child], list[Child] | None, list[Child] | None] | None:
    """The folders of one RFH2 in ``raw[pos:end]`` in the fast path's shape (mcd and jms, optional
    usr and ajms): the mcd folder's bytes, jms children by name (the first wins), usr and ajms
    children; None for any other shape."""
