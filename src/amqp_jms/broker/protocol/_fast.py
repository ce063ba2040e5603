"""proton-c through cffi, for the broker's per-delivery hot path (``engine.raw``, shared with the
client provider's)."""

from __future__ import annotations

from ...engine.raw import (
    ACCEPTED,
    NO_OUTCOME,
    TRANSACTIONAL_STATE,
    addr,
    ffi,
    lib,
    ptr_addr,
    set_transactional_state,
    transactional_state,
)

__all__ = [
    "ACCEPTED", "NO_OUTCOME", "TRANSACTIONAL_STATE", "addr", "ffi", "lib", "ptr_addr",
    "set_transactional_state", "transactional_state",
]
