"""``FrameDepthGuard`` splits the incoming byte stream into frames by their headers and walks
each non-transfer frame's body for nesting past ``max_value_depth``. It takes whatever chunks the
socket gives; what it finds must not depend on where the chunks are cut, and it must find the
first frame that nests too deep in the chunk where that frame ends (the engine must never
complete it)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from amqp_jms.broker.protocol.frame_depth import FrameDepthGuard

LIMIT = 10
HEADER = b"AMQP\x00\x01\x00\x00"


def nested_list(depth: int, pad: int) -> bytes:
    """A value nesting ``depth`` lists deep, padded with a binary of ``pad`` bytes."""
    v = b"\xa0" + bytes([pad]) + b"\x00" * pad
    for _ in range(depth):
        v = b"\xd0" + (len(v) + 4).to_bytes(4, "big") + (1).to_bytes(4, "big") + v
    return v


def frame(code: int, body: bytes) -> bytes:
    perf = b"\x00\x53" + bytes([code]) + body
    return (8 + len(perf)).to_bytes(4, "big") + b"\x02\x00\x00\x00" + perf


frames = st.lists(st.tuples(st.sampled_from([0x10, 0x13, 0x14, 0x15]), st.integers(0, 14),
                            st.integers(0, 40)), min_size=1, max_size=8)


@settings(max_examples=300)
@given(frames, st.lists(st.integers(1, 60), min_size=1, max_size=40))
def test_what_the_guard_finds_does_not_depend_on_the_chunks(spec: list[tuple[int, int, int]],
                                                            cuts: list[int]) -> None:
    stream = HEADER + b"".join(frame(code, nested_list(depth, pad)) for code, depth, pad in spec)
    # the first frame that must be refused: not a transfer, nesting past the limit (the list
    # levels plus the performative's described level)
    ends, pos, first_deep_end = [], len(HEADER), None
    for code, depth, pad in spec:
        pos += len(frame(code, nested_list(depth, pad)))
        ends.append(pos)
        if first_deep_end is None and code != 0x14 and depth + 1 > LIMIT:
            first_deep_end = pos
    guard = FrameDepthGuard(LIMIT)
    start, found_in = 0, None
    for cut in [*cuts, len(stream)]:
        chunk = stream[start:start + cut]
        if not chunk:
            break
        if guard.feed(chunk) is not None:
            found_in = (start, start + len(chunk))
            break
        start += len(chunk)
    if first_deep_end is None:
        assert found_in is None
    else:
        assert found_in is not None
        assert found_in[0] < first_deep_end <= found_in[1]
