"""check_depth: nesting beyond the limit is refused without decoding; real messages pass."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from proton import Message

from amqp_jms.broker.routing.depth import check_depth
from amqp_jms.mapping.codec import encode_value
from amqp_jms.types import Described, Symbol, UInt, ULong


def nested(depth: int, kind: str) -> Any:
    v: Any = UInt(1)
    for _ in range(depth):
        if kind == "list":
            v = [v, b"\x00" * 3]
        else:
            v = {Symbol("k"): v} if kind == "map" else Described(ULong(1), v)
    return v


@pytest.mark.parametrize("kind", ["list", "map", "described"])
def test_nesting_over_the_limit_is_refused(kind: str) -> None:
    check_depth(encode_value(nested(100, kind)), 100)
    with pytest.raises(ValueError, match="max_value_depth"):
        check_depth(encode_value(nested(101, kind)), 100)
    with pytest.raises(ValueError, match="max_value_depth"):
        check_depth(deep_lists(5000), 100)  # deeper than the encoder itself could recurse


def deep_lists(depth: int) -> bytes:
    data = encode_value(UInt(1))
    for _ in range(depth):
        data = b"\xd0" + (len(data) + 4).to_bytes(4, "big") + (1).to_bytes(4, "big") + data
    return data


def test_real_messages_pass() -> None:
    m = Message(
        body={"a": [1, 2, {"b": b"\x00" * 500}], "c": list(range(300))},
        properties={"x": 1, "y": "z" * 200},
        annotations={"x-opt-jms-msg-type": 1},
        durable=True, priority=7, id="ID:1", subject="s",
    )
    check_depth(m.encode(), 100)
    check_depth(Message(body=b"\x00" * 100000).encode(), 100)
    # an array of lists, and an array with a described element constructor
    check_depth(encode_value(nested(3, "list")) * 50, 100)


def test_truncated_data_is_malformed_not_a_crash() -> None:
    data = encode_value(nested(150, "list"))
    for cut in (1, 7, len(data) // 2, len(data) - 1):
        with pytest.raises(ValueError):
            check_depth(data[:cut] + b"\x00" * 200, 100)


def test_a_zero_filled_body_is_not_walked_but_deep_properties_are(monkeypatch: pytest.MonkeyPatch) -> None:
    """Zero bytes look like described-value constructors to the byte count; a message whose
    only such bytes sit in its binary body is passed on its sections' sizes, without the walk,
    while one nesting too deep in its application properties is still refused."""
    import amqp_jms.broker.routing.depth as depth

    body = Message(body=b"\x00" * 256, durable=True, properties={"k": 1}, id="ID:1").encode()
    walked: list[int] = []
    real_walk = depth._walk
    monkeypatch.setattr(depth, "_walk", lambda data, limit: (walked.append(1), real_walk(data, limit)))
    check_depth(body, 100)
    assert walked == []
    props: Any = 1
    for _ in range(150):
        props = {"k": props}
    deep = Message(body=b"\x00" * 256, properties={"k": props}).encode()
    with pytest.raises(ValueError, match="max_value_depth"):
        check_depth(deep, 100)
    assert walked == [1]


_values = st.recursive(
    st.none() | st.integers(0, 5) | st.binary(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=60,
)


@given(_values,
       st.binary(max_size=600), st.integers(1, 12))
def test_the_sections_bound_never_passes_what_the_walk_refuses(props: Any, body: bytes, limit: int) -> None:
    """Whatever passes on the sections' sizes, the full walk passes too: the bound is sound."""
    import amqp_jms.broker.routing.depth as depth

    data = Message(body=body, properties={"p": props}, annotations={"x-opt-a": props}).encode()
    bound = depth._sections_bound(data)
    if bound is not None and bound <= limit:
        depth._walk(data, limit)  # raises if the bound lied
