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

__all__ = [
    "ACCEPTED", "MALFORMED", "NO_OUTCOME", "TRANSACTIONAL_STATE", "addr", "ffi", "lib", "ptr_addr",
    "set_transactional_state", "transactional_state",
]

_cast = ffi.cast


def ptr_addr(ptr: Any) -> int:
    """A C pointer as an int (dictionary key)."""
    return int(_cast("uintptr_t", ptr))


def addr(wrapper: Any) -> int:
    """The address of the proton-c object behind a proton Python wrapper."""
    return int(_cast("uintptr_t", wrapper._impl))


# -- transactional-state, read and written without proton's Data objects --------------------------
#: the descriptor of AMQP's ``transactional-state`` delivery state (a state, not an outcome)
TRANSACTIONAL_STATE = 0x34
#: the ``accepted`` outcome's descriptor
ACCEPTED: int = lib.PN_ACCEPTED
#: :func:`transactional_state`'s outcome when the state names none (the sender's own transfer)
NO_OUTCOME = 0
#: :func:`transactional_state`'s outcome when the state is not the list AMQP defines
MALFORMED = -1


def transactional_state(delivery: Any) -> tuple[bytes | None, int]:
    """The remote ``transactional-state`` of ``delivery`` (a ``pn_delivery_t*``):
    ``(txn-id, outcome descriptor)``.

    Every transfer and disposition of a transaction carries one. Going through proton's
    ``Disposition.data`` builds a ``Data`` object, a list and a ``Described`` per delivery, most
    of a transacted message's cost on either side; this reads the two fields in place. The
    outcome is :data:`NO_OUTCOME` when absent or null, :data:`MALFORMED` when the state is not
    a list of a binary and a described outcome with a ulong descriptor (callers then take the
    general path, which reports it).
    """
    d = lib.pn_disposition_data(lib.pn_delivery_remote(delivery))
    lib.pn_data_rewind(d)
    if not lib.pn_data_next(d) or lib.pn_data_type(d) != lib.PN_LIST:
        return None, MALFORMED
    lib.pn_data_enter(d)
    txn_id: bytes | None = None
    outcome = NO_OUTCOME
    if lib.pn_data_next(d):
        kind = lib.pn_data_type(d)
        if kind == lib.PN_BINARY:
            b = lib.pn_data_get_binary(d)
            txn_id = ffi.unpack(b.start, b.size)
        elif kind != lib.PN_NULL:
            return None, MALFORMED
        if lib.pn_data_next(d):
            kind = lib.pn_data_type(d)
            if kind == lib.PN_DESCRIBED:
                lib.pn_data_enter(d)
                if not lib.pn_data_next(d) or lib.pn_data_type(d) != lib.PN_ULONG:
                    return txn_id, MALFORMED
                outcome = int(lib.pn_data_get_ulong(d))
            elif kind != lib.PN_NULL:
                return txn_id, MALFORMED
    return txn_id, outcome


def set_transactional_state(delivery: Any, txn_id: bytes, outcome: int = NO_OUTCOME) -> None:
    """Set ``delivery``'s local state to ``transactional-state(txn_id[, outcome{}])``: what a
    sender puts on a transfer in a transaction (no outcome), and what a receiver answers with
    (``ACCEPTED``); the encoding is the one proton's ``obj2dat`` writes for
    ``[txn_id, Described(ulong(outcome), [])]``."""
    d = lib.pn_disposition_data(lib.pn_delivery_local(delivery))
    lib.pn_data_clear(d)
    lib.pn_data_put_list(d)
    lib.pn_data_enter(d)
    lib.pn_data_put_binary(d, (len(txn_id), ffi.from_buffer(txn_id)))
    if outcome != NO_OUTCOME:
        lib.pn_data_put_described(d)
        lib.pn_data_enter(d)
        lib.pn_data_put_ulong(d, outcome)
        lib.pn_data_put_list(d)
        lib.pn_data_enter(d)
        lib.pn_data_exit(d)
        lib.pn_data_exit(d)
    lib.pn_data_exit(d)
    lib.pn_delivery_update(delivery, TRANSACTIONAL_STATE)
