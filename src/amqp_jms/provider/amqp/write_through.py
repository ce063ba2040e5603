"""A waiting send's transfer and its write to the socket in one C call, and its answer's read,
where the accelerator is built.

A synchronous send's own time is mostly Python run cold: the sending thread has slept in the
kernel since the last answer (on a virtual machine, its CPU has halted), and everything it runs
from there to the next write is on the round trip. Measured on a 2-CPU VM, that stretch of the
Python path (the transfer into proton: ``pn_delivery``, ``pn_link_send``, ``pn_link_advance``;
then proton's output, the outgoing editor's look at it, asyncio's write) took about 10 µs of a
165 µs round trip. The accelerator (``_ctransfer``) does it in one call, and sends proton's
output on the socket itself when it is exactly one frame that the outgoing editor
(``outgoing.OutgoingFrames``) would pass untouched; any other output it leaves in proton, for
the provider's usual write.

The answer's end is the same story: a caller that reads its own answer (``answer_here``) wakes
from its sleep and runs Python cold until ``send`` returns. ``read_in`` reads the socket straight
into proton's input buffer, processes it, and says whether the one event then pending is the
delivery the caller waits for (whose outcome the producer then reads: ``accepted_alone``); the
rest of the handling is the provider's as before.

It is bound to the proton library python-qpid-proton loaded (its cffi module), by symbol: it
calls the very functions the Python path calls through cffi. Without a C compiler, with
``AMQP_JMS_NO_ACCEL`` set, or should that library not be found, ``transfer_out`` is None and the
Python path runs, with the same bytes on the wire.
"""

from __future__ import annotations

from collections.abc import Callable

import cproton_ffi

from ..._accel import load_accelerator
from ...engine.raw import lib

__all__ = ["AGAIN", "GONE", "LEFT", "SOLE", "TAKEN", "one_plain_frame", "read_in", "transfer_out"]

#: ``transfer_out(link, tag, data, transport, fd) -> (delivery, rest)``: addresses of the
#: ``pn_link_t`` and ``pn_transport_t``, the connection's socket; the new delivery's address,
#: and ``rest``: None (proton's output went out whole, or there was none), ``LEFT`` (proton's
#: output is not one plain frame: left in proton for the usual write), or the bytes the socket
#: did not take (already taken from proton: the caller's to write next)
transfer_out: Callable[[int, bytes, bytes, int, int], tuple[int, bytes | str | None]] | None = None
#: ``read_in(fd, transport, collector, delivery) -> status``: one read of the socket into proton
#: (addresses of the ``pn_transport_t`` and ``pn_collector_t``), and whether the sole event then
#: pending is a delivery event of the ``pn_delivery_t`` at ``delivery`` (0: none is): ``SOLE``,
#: ``TAKEN`` (read and processed, not that), ``AGAIN`` (nothing to read), ``GONE`` (the socket
#: ended or failed, or the transport takes no input: nothing read, the loop meets it itself)
read_in: Callable[[int, int, int, int], int] | None = None
#: ``one_plain_frame(data) -> bool``: the C twin of ``outgoing._one_plain_frame`` (for its tests)
one_plain_frame: Callable[[bytes], bool] | None = None
LEFT = "left"
SOLE, TAKEN, AGAIN, GONE = 1, 0, -1, -2


def _load() -> None:
    global transfer_out, read_in, one_plain_frame
    accel = load_accelerator("amqp_jms.provider.amqp._ctransfer")
    if accel is None:
        return
    try:
        accel.bind(cproton_ffi.__file__, lib.PN_DELIVERY)
    except ImportError:  # (a proton build without these symbols exported: the Python path)
        return
    transfer_out, read_in, one_plain_frame = accel.transfer_out, accel.read_in, accel.one_plain_frame
    assert (accel.LEFT, accel.SOLE, accel.TAKEN, accel.AGAIN, accel.GONE) == (LEFT, SOLE, TAKEN, AGAIN, GONE)


_load()
