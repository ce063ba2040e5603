"""proton-c through cffi, for per-delivery hot paths of the broker and the client provider.

proton's Python layer builds an ``Event`` plus a wrapper object for every context (delivery,
link, session, connection) of every event; at tens of thousands of deliveries a second that is
most of an I/O loop's CPU. Hot paths therefore read ``Engine.raw_events()`` pointers with
``lib`` directly and find their link by its address; everything else still goes through
proton's Python API.
"""

from __future__ import annotations

from typing import Any

from cproton_ffi import ffi, lib

__all__ = ["addr", "ffi", "lib", "ptr_addr"]

_cast = ffi.cast


def ptr_addr(ptr: Any) -> int:
    """A C pointer as an int (dictionary key)."""
    return int(_cast("uintptr_t", ptr))


def addr(wrapper: Any) -> int:
    """The address of the proton-c object behind a proton Python wrapper."""
    return int(_cast("uintptr_t", wrapper._impl))
