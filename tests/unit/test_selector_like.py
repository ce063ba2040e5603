"""LIKE in linear time: the matcher agrees with the (backtracking) reference regex on small
inputs, and the patterns that made a backtracking regex take seconds are instant everywhere."""

from __future__ import annotations

import re
import time

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from amqp_jms.selector import Selector
from amqp_jms.selector.compiler import like_regex
from amqp_jms.selector.like import like_matcher
from amqp_jms.spark.functions import _like_regex as spark_like_regex

PATTERNS = st.text(alphabet="ab%_!\n", max_size=10)
TEXTS = st.text(alphabet="ab_%!\n", max_size=12)
EVIL = "%a%a%a%a%a%a%b"


def as_python(java: str) -> re.Pattern[str]:
    """The Spark (Java) regex in Python's syntax: only ``\\x{hh}`` differs (atomic groups
    ``(?>...)`` are in both)."""
    return re.compile(re.sub(r"\\x\{([0-9a-f]+)\}", lambda m: f"\\U{int(m.group(1), 16):08x}", java))


@settings(max_examples=400, deadline=None)
@given(pattern=PATTERNS, text=TEXTS, escaped=st.booleans())
def test_matcher_agrees_with_the_reference_regex(pattern: str, text: str, escaped: bool) -> None:
    escape = "!" if escaped else None
    expected = like_regex(pattern, escape).fullmatch(text) is not None
    assert like_matcher(pattern, escape)(text) is expected
    assert (as_python(spark_like_regex(pattern, escape)).search(text) is not None) is expected or (
        text.endswith("\n")  # Java's ``$`` also matches before a final line terminator
    )


def test_the_pattern_that_blocked_the_broker_is_instant() -> None:
    text = "a" * 100_000
    t0 = time.perf_counter()
    assert like_matcher(EVIL, None)(text) is False
    assert like_matcher("%a_a%a_a%a_a%b", None)(text) is False
    sel = Selector(f"p LIKE '{EVIL}'")
    assert sel.matches_lookup({"p": text}.get) is False
    assert sel.matches_lookup({"p": text + "b"}.get) is True
    batch = pa.table({"p": [text, text + "b"]})
    assert sel.evaluate_batch(batch).to_pylist() == [False, True]
    assert as_python(spark_like_regex(EVIL, None)).search(text) is None
    assert time.perf_counter() - t0 < 1.0
