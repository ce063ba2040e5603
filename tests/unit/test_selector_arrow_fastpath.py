"""The numpy fast path of ``evaluate_batch`` (``arrow_plan.py``/``arrow_strings.py``) answers
exactly like ``Selector.matches``: string equality / IN / prefix LIKE read from the raw Arrow
buffers (multi-byte UTF-8, empty strings, values that are prefixes of each other, literals longer
than a 64-bit word, nulls, sliced arrays, chunked tables, large_string / string_view /
dictionary inputs), numeric comparisons after Java promotion, booleans, IS NULL, and the
three-valued AND/OR/NOT that combines them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amqp_jms.message import TextMessage
from amqp_jms.selector import Selector
from amqp_jms.selector.ast import quote
from amqp_jms.testing.messages import with_properties
from amqp_jms.types import Byte, Float, Int, Short, UByte, UInt, UShort

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# short pieces that make prefixes of each other, multi-byte UTF-8 (2, 3 and 4 bytes) and words
# longer than 8 and 16 bytes
PIECES = ["", "a", "ab", "abc", "é", "€", "𝄞", "abcdefgh", "abcdefghi", "abcdefghijklmnopq", "%", "_", "'"]
texts = st.lists(st.sampled_from(PIECES), max_size=3).map("".join)


def _message(**props: Any) -> TextMessage:
    m = TextMessage("x")
    m = with_properties(m, {k: v for k, v in props.items() if v is not None})
    return m


def _string_variants(values: list[str | None], other: list[Any]) -> list[pa.RecordBatch | pa.Table]:
    """The column ``s`` as string, large_string, string_view and dictionary, sliced at a
    non-zero offset, and as a chunked Table (a numeric column ``n`` alongside)."""
    pad = ["zz-pad", None, "pad"]  # rows before the slice, so offsets and bitmaps start mid-buffer
    out: list[pa.RecordBatch | pa.Table] = []
    for t in (pa.string(), pa.large_string(), pa.string_view()):
        s = pa.array(pad + values, t).slice(len(pad))
        n = pa.array([0, 0, 0, *other], pa.int32()).slice(len(pad))
        out.append(pa.RecordBatch.from_arrays([s, n], names=["s", "n"]))
    plain = out[0]
    encoded = pc.dictionary_encode(pa.array(pad + values)).slice(len(pad))  # indices sliced too
    out.append(pa.RecordBatch.from_arrays([encoded, plain.column(1)], names=["s", "n"]))
    half = len(values) // 2
    out.append(pa.Table.from_batches([plain.slice(0, half), plain.slice(half)]))
    return out


def _agree(text: str, values: list[str | None], other: list[Any] | None = None) -> None:
    other = other if other is not None else [None] * len(values)
    sel = Selector(text)
    expected = [sel.matches(_message(s=v, n=None if o is None else Int(o))) for v, o in zip(values, other)]
    for data in _string_variants(values, other):
        assert sel.evaluate_batch(data).to_pylist() == expected, (text, type(data), data.schema)


string_predicates = st.one_of(
    st.builds(lambda op, v: f"s {op} {quote(v)}", st.sampled_from(["=", "<>"]), texts),
    st.builds(lambda v: f"{quote(v)} = s", texts),
    st.builds(lambda neg, vs: f"s {neg}IN ({', '.join(quote(v) for v in vs)})", st.sampled_from(["", "NOT "]),
              st.lists(texts, min_size=1, max_size=4)),
    st.builds(lambda neg, v, tail: f"s {neg}LIKE {quote(v.replace('%', '').replace('_', '') + tail)}",
              st.sampled_from(["", "NOT "]), texts, st.sampled_from(["", "%", "%%"])),
    st.builds(lambda v: f"s LIKE {quote(v.replace('!', '') + '!%')} ESCAPE '!'", texts),
    st.just("s IS NULL"),
    st.just("s IS NOT NULL"),
    st.builds(lambda v: f"n > {v}", st.integers(-3, 3)),
)
string_conditions = st.recursive(
    string_predicates,
    lambda inner: st.one_of(
        st.builds(lambda a, b: f"({a}) AND ({b})", inner, inner),
        st.builds(lambda a, b: f"({a}) OR ({b})", inner, inner),
        st.builds(lambda a: f"NOT ({a})", inner),
    ),
    max_leaves=5,
)


@SETTINGS
@given(
    string_conditions,
    st.lists(st.one_of(st.none(), texts), min_size=1, max_size=12),
    st.data(),
)
def test_string_fast_path_agrees_with_matches(
    text: str, values: list[str | None], data: st.DataObject
) -> None:
    size = len(values)
    other = data.draw(st.lists(st.one_of(st.none(), st.integers(-4, 4)), min_size=size, max_size=size))
    _agree(text, values, other)


@SETTINGS
@given(
    st.lists(texts, min_size=1, max_size=4),
    st.lists(st.one_of(st.none(), texts), min_size=1, max_size=12),
)
def test_or_of_equalities_on_one_column_agrees(literals: list[str], values: list[str | None]) -> None:
    """An OR chain of equalities is fused into one IN; NULL rows stay unknown (so NOT of it is
    not selected either)."""
    chain = " OR ".join(f"s = {quote(v)}" for v in literals)
    _agree(chain, values)
    _agree(f"NOT ({chain})", values)
    _agree(f"{chain} OR n = 1", values, [1 if i % 3 == 0 else None for i in range(len(values))])


BIG = [None if i % 7 == 3 else PIECES[(i * 5) % len(PIECES)] + PIECES[i % 4] for i in range(3000)]


@pytest.mark.parametrize(
    "text",
    [
        "s = 'a'",
        "s = ''",
        "s <> 'ab'",
        "s IN ('a', 'ab', 'abc', '')",
        "s IN ('abcdefghijklmnopqa', 'abcdefghia', '𝄞a')",
        "s NOT IN ('é', '€ab')",
        "s LIKE 'ab%'",
        "s LIKE 'abcdefghi%'",
        "s LIKE '%'",
        "s NOT LIKE 'é%'",
        "s LIKE 'abcdefghijklmnopq'",
        "s = 'a' OR s = 'ab' OR s = '€'",
    ],
)
def test_large_batches_take_the_dense_and_sparse_paths(text: str) -> None:
    """3000 rows: both the all-rows path (most rows have a literal's length) and the
    candidate-rows path; slices ending at the buffer's end read no byte past it."""
    sel = Selector(text)
    expected = [sel.matches(_message(s=v)) for v in BIG]
    array = pa.array(BIG, pa.string())
    batch = pa.RecordBatch.from_arrays([array], names=["s"])
    assert sel.evaluate_batch(batch).to_pylist() == expected
    for start, length in [(1, 2998), (13, 2987), (2999, 1), (3000, 0), (5, 8)]:
        part = batch.slice(start, length)
        assert sel.evaluate_batch(part).to_pylist() == expected[start : start + length]


def test_misaligned_and_unpadded_data_buffers() -> None:
    """A data buffer that does not start on an 8-byte boundary, and one that ends exactly at
    the last row's last byte, are read through a padded copy."""
    values = ["abc", "", "é€", "abcdefghij", "ab"]
    raw = "".join(values).encode()
    offsets = np.cumsum([0] + [len(v.encode()) for v in values]).astype(np.int32)
    backing = pa.py_buffer(b"x" + raw)
    data = backing.slice(1)
    assert data.address % 8 != 0
    array = pa.Array.from_buffers(pa.string(), len(values), [None, pa.py_buffer(offsets.tobytes()), data])
    batch = pa.RecordBatch.from_arrays([array], names=["s"])
    for text in ["s = 'ab'", "s = 'abcdefghij'", "s LIKE 'abc%'", "s IN ('', 'é€')"]:
        sel = Selector(text)
        assert sel.evaluate_batch(batch).to_pylist() == [sel.matches(_message(s=v)) for v in values], text


def test_dictionary_with_many_hits_and_null_indices() -> None:
    dictionary = pa.array(["a", "b", "c", "d", "e", "f"])
    indices = pa.array([0, 1, 2, 3, 4, 5, None, 5, 0], pa.int8())
    batch = pa.RecordBatch.from_arrays([pa.DictionaryArray.from_arrays(indices, dictionary)], names=["s"])
    sel = Selector("s IN ('a', 'b', 'c', 'd', 'e')")
    assert sel.evaluate_batch(batch).to_pylist() == [True] * 5 + [False, False, False, True]
    sel = Selector("s NOT IN ('a', 'b', 'c', 'd', 'e')")
    assert sel.evaluate_batch(batch).to_pylist() == [False] * 5 + [True, False, True, False]


TRICKY = [2**53 + 1, 2**24 + 1]
NUMERIC_VALUES: dict[str, tuple[Any, st.SearchStrategy[Any]]] = {
    "int8": (pa.int8(), st.integers(-128, 127).map(Byte)),
    "int16": (pa.int16(), st.integers(-(2**15), 2**15 - 1).map(Short)),
    "int32": (pa.int32(), st.integers(-(2**31), 2**31 - 1).map(Int)),
    "int64": (pa.int64(), st.one_of(st.integers(-(2**63), 2**63 - 1), st.sampled_from(TRICKY))),
    "uint8": (pa.uint8(), st.integers(0, 255).map(UByte)),
    "uint16": (pa.uint16(), st.integers(0, 2**16 - 1).map(UShort)),
    "uint32": (pa.uint32(), st.integers(0, 2**32 - 1).map(UInt)),
    "float32": (pa.float32(), st.floats(width=32).map(Float)),
    "float64": (pa.float64(), st.one_of(st.floats(), st.sampled_from([2.0**53, 16777217.0]))),
}
numeric_literals = st.one_of(
    st.integers(-(2**31), 2**31 - 1).map(str),
    st.integers(-(2**63), 2**63 - 1).map(lambda v: f"{v}L"),
    st.sampled_from(["16777217", "9007199254740993L", "0.1", "1.1F", "1.5E300", "-0.0", "3"]),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)


@SETTINGS
@given(st.sampled_from(sorted(NUMERIC_VALUES)), st.data(), numeric_literals, numeric_literals)
def test_numeric_fast_path_agrees_with_matches(type_name: str, data: st.DataObject, a: str, b: str) -> None:
    arrow_type, values = NUMERIC_VALUES[type_name]
    column = data.draw(st.lists(st.one_of(st.none(), values), min_size=1, max_size=10))
    batch = pa.RecordBatch.from_arrays([pa.array(column, arrow_type)], names=["x"])
    msgs = [_message(x=v) for v in column]
    for text in [f"x = {a}", f"x <> {a}", f"x < {a}", f"{a} <= x", f"x > {a} OR x >= {b}",
                 f"x BETWEEN {a} AND {b}", f"x NOT BETWEEN {a} AND {b}", f"NOT (x >= {a})"]:
        sel = Selector(text)
        assert sel.evaluate_batch(batch).to_pylist() == [sel.matches(m) for m in msgs], text
        assert sel.evaluate_batch(batch.slice(1)).to_pylist() == [sel.matches(m) for m in msgs[1:]], text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("f", [True, False, False, False]),
        ("f = TRUE", [True, False, False, False]),
        ("f <> TRUE", [False, True, False, False]),
        ("NOT f", [False, True, False, False]),
        ("f = FALSE OR f IS NULL", [False, True, True, True]),
        ("f IS NOT NULL AND NOT f", [False, True, False, False]),
        ("f = 'x'", [False, False, False, False]),  # unlike types: false, unknown on NULL
        ("f AND missing IS NULL", [True, False, False, False]),
        ("missing = 'a' OR f", [True, False, False, False]),
        ("NOT (missing = 'a') OR NOT f", [False, True, False, False]),
        ("s = 'a'", [False, False, False, False]),  # a numeric column against a string
        ("s <> 'a'", [False, False, False, False]),  # unlike types are never equal nor unequal
        ("s > 1 AND s < 3", [False, True, False, False]),
    ],
)
def test_booleans_missing_columns_and_unlike_types(text: str, expected: list[bool]) -> None:
    columns = [pa.array([True, False, None, None]), pa.array([1, 2, 3, None], pa.int64())]
    batch = pa.RecordBatch.from_arrays(columns, names=["f", "s"])
    msgs = [_message(f=f, s=s) for f, s in zip([True, False, None, None], [1, 2, 3, None])]
    sel = Selector(text)
    assert [sel.matches(m) for m in msgs] == expected
    assert sel.evaluate_batch(batch).to_pylist() == expected
    assert sel.evaluate_batch(batch.slice(1)).to_pylist() == expected[1:]


def test_duplicated_column_name_still_refused() -> None:
    batch = pa.RecordBatch.from_arrays([pa.array(["a"]), pa.array(["b"])], names=["s", "s"])
    with pytest.raises(KeyError):
        Selector("s = 'a'").evaluate_batch(batch)


def test_big_batches_are_evaluated_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches longer than the plan's chunk run chunk by chunk (the walker's parts included)."""
    from amqp_jms.selector import arrow_plan

    monkeypatch.setattr(arrow_plan, "_CHUNK", 5)
    values = [None if i % 4 == 1 else PIECES[i % len(PIECES)] for i in range(23)]
    numbers = [None if i % 5 == 2 else i - 10 for i in range(23)]
    batch = pa.RecordBatch.from_arrays([pa.array(values), pa.array(numbers, pa.int32())], names=["s", "n"])
    msgs = [_message(s=v, n=None if x is None else Int(x)) for v, x in zip(values, numbers)]
    for text in ["s IN ('a', 'ab') OR n * 2 > 6", "NOT (s LIKE 'abc%') AND n IS NOT NULL", "s = 'é'"]:
        sel = Selector(text)
        assert sel.evaluate_batch(batch).to_pylist() == [sel.matches(m) for m in msgs], text
        assert sel.evaluate_batch(batch.slice(3)).to_pylist() == [sel.matches(m) for m in msgs[3:]], text


def test_many_selectors_each_keep_their_own_answers() -> None:
    """Plans are cached per AST (a few hundred at most): evicting old ones never mixes them up."""
    batch = pa.RecordBatch.from_arrays([pa.array(list(range(10)), pa.int32())], names=["x"])
    selectors = [Selector(f"x > {i % 10}") for i in range(600)]
    for _ in range(2):
        for i, sel in enumerate(selectors):
            assert sel.evaluate_batch(batch).to_pylist() == [v > i % 10 for v in range(10)]


@pytest.mark.parametrize(
    "text",
    [
        "(s = 'a' OR s = 'ab') AND n > 0",
        "n > 2 AND s IN ('abc', 'é€', '') AND n < 9",
        "n < 0 OR s LIKE 'ab%'",
        "NOT (n > 3 OR s NOT IN ('a', 'abcdefghi'))",
        "(n > 5 AND s = 'abcdefghijklmnopq') OR (n IS NULL AND s LIKE '€%')",
        "n > 1 AND (s = 'ab' OR (n < 7 AND NOT s LIKE 'a%'))",
    ],
)
def test_chains_read_strings_only_where_undecided(text: str) -> None:
    """In AND/OR chains the string tests run last and only on rows the other terms left open;
    the answers (NULLs included) are those of matches, on big batches too."""
    values = [None if i % 11 == 4 else PIECES[(i * 7) % len(PIECES)] + PIECES[i % 3] for i in range(5000)]
    numbers = [None if i % 13 == 6 else (i * 5) % 12 - 2 for i in range(5000)]
    batch = pa.RecordBatch.from_arrays([pa.array(values), pa.array(numbers, pa.int32())], names=["s", "n"])
    sel = Selector(text)
    expected = [sel.matches(_message(s=v, n=None if x is None else Int(x))) for v, x in zip(values, numbers)]
    assert sel.evaluate_batch(batch).to_pylist() == expected
    assert sel.evaluate_batch(batch.slice(17, 4000)).to_pylist() == expected[17:4017]
