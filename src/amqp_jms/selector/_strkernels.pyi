"""Type stub of the optional C accelerator (``_strkernels.c``)."""

from _typeshed import ReadableBuffer, WriteableBuffer

def match(
    offsets: ReadableBuffer,
    data: ReadableBuffer,
    offset: int,
    length: int,
    width: int,
    literals: tuple[bytes, ...],
    prefix: bool,
    out: WriteableBuffer,
    /,
) -> None:
    """For rows ``offset .. offset+length`` of an Arrow string array (``width`` 4: int32 offsets,
    8: int64), write into ``out[i]`` 1 when the row equals one of ``literals`` (``prefix``: starts
    with one), else 0. ``ValueError`` on any buffer or offset that would read or write out of
    bounds, or decreasing offsets."""
