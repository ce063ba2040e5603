"""``amqp.traceFrames=true``: every AMQP frame in and out, decoded, on the ``amqp_jms.frames`` logger.

Qpid JMS's option of the same name logs each frame its proton-j transport reads and writes; here
proton-c's own frame trace (what ``PN_TRACE_FRM=1`` prints on stderr) is routed into Python
logging instead, one DEBUG line per frame, each naming the connection::

    [connection=ID:...:1] 0 -> @attach(18) [name="...", handle=0x0, role=false, ...]
    [connection=ID:...:1] 0 <- @flow(19) [..., link-credit=0x7d0, drain=false]

The channel comes first, then the direction (``->`` sent, ``<-`` received), then the
performative with its fields; a transfer ends with the payload's size and its first bytes.
The SASL frames are traced too, with the credentials of ``sasl-init`` blanked out.

Off by default, and free when off: no tracer is installed, so proton formats nothing.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

from .._logs import FRAMES, with_ids

__all__ = ["as_sent", "frame_logger", "redact"]

_INITIAL_RESPONSE = re.compile(r'initial-response=b"(?:[^"\\]|\\.)*"')
_PREFIX = "FRAME: "
#: how proton's trace prints ``outgoing.MODIFIED_DELIVERY_FAILED``
_DEFAULT_OUTCOME = "default-outcome=@modified(39) [delivery-failed=true]"
_SOURCE = "source=@source(40) ["


def redact(line: str) -> str:
    """The trace line with a ``sasl-init``'s initial response (PLAIN's password) blanked."""
    if "@sasl-init" in line:
        return _INITIAL_RESPONSE.sub('initial-response=b"<redacted>"', line)
    return line


def as_sent(line: str) -> str:
    """The trace of a frame we send as it leaves after ``outgoing.OutgoingFrames``: proton
    traces a receiver's attach before that adds the source's default outcome (proton cannot
    write it), so the line gets it too. The differential test against the scripted peer's own
    trace (``test_client_frame_trace``) pins the two together."""
    if "-> @attach(18)" not in line or "role=true" not in line or _SOURCE not in line:
        return line
    start = line.index(_SOURCE) + len(_SOURCE)
    depth, end = 1, start
    while end < len(line) and depth:
        depth += {"[": 1, "]": -1}.get(line[end], 0)
        end += 1
    source = line[start:end - 1]
    if "default-outcome=" in source:
        return line
    for field in ("outcomes=", "capabilities="):
        at = source.find(field)
        if at >= 0 and (at == 0 or source[at - 1] == " "):
            source = f"{source[:at]}{_DEFAULT_OUTCOME}, {source[at:]}"
            break
    else:
        source = f"{source}, {_DEFAULT_OUTCOME}" if source else _DEFAULT_OUTCOME
    return line[:start] + source + line[end - 1:]


def frame_logger(connection_id: str) -> Callable[[str], None]:
    """The sink for ``Engine.trace_frames``: one DEBUG line per frame for ``connection_id``."""
    log = with_ids(FRAMES, connection=connection_id)
    enabled = FRAMES.isEnabledFor

    def sink(line: str) -> None:
        if enabled(logging.DEBUG):
            if line.startswith(_PREFIX):
                line = line[len(_PREFIX):]
            log.debug("%s", as_sent(redact(line)))

    return sink
