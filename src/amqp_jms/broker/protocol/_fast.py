"""proton-c through cffi, for the broker's per-delivery hot path (``engine.raw``, shared with the
client provider's)."""

from __future__ import annotations

from ...engine.raw import addr, ffi, lib, ptr_addr

__all__ = ["addr", "ffi", "lib", "ptr_addr"]
