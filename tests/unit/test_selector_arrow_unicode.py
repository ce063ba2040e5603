"""String literals Arrow cannot hold (lone surrogates; a Python str may carry them) evaluate over
Arrow exactly as they do per message, instead of leaking UnicodeEncodeError from pyarrow."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amqp_jms.message import TextMessage
from amqp_jms.selector import Selector
from amqp_jms.selector.arrow import messages_to_batch


def _messages() -> list[TextMessage]:
    out = []
    for value in ["x", "\ufffd", "", None]:
        m = TextMessage("body")
        if value is not None:
            m.set_string_property("s", value)
        m.set_int_property("n", 1)
        out.append(m)
    return out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("s = '\ud800'", [False, False, False, False]),
        ("s <> '\ud800'", [True, True, True, False]),  # NULL row: unknown, so not selected
        ("'\ud800' = s", [False, False, False, False]),
        ("'\ud800' = '\ud800'", [True, True, True, True]),
        ("'\ud800' <> 'x'", [True, True, True, True]),
        ("s IN ('\ud800')", [False, False, False, False]),
        ("s IN ('\ud800', 'x')", [True, False, False, False]),
        ("s NOT IN ('\ud800')", [True, True, True, False]),
        ("s LIKE '%\udfff%'", [False, False, False, False]),
        ("s NOT LIKE '\udfff'", [True, True, True, False]),
        ("s LIKE 'x' ESCAPE '\ud800'", [True, False, False, False]),
        ("n = '\ud800'", [False, False, False, False]),
    ],
)
def test_arrow_agrees_with_per_message_matching(text: str, expected: list[bool]) -> None:
    selector = Selector(text)
    msgs = _messages()
    assert [selector.matches(m) for m in msgs] == expected
    assert selector.evaluate_batch(messages_to_batch(msgs)).to_pylist() == expected


surrogate_text = st.text(st.characters(codec=None, categories=["Cs", "Ll"]), max_size=3)


@settings(max_examples=100, deadline=None)
@given(surrogate_text, st.sampled_from(["s = {}", "s <> {}", "s IN ({}, 'x')", "s LIKE {}", "NOT s LIKE {}"]))
def test_any_string_literal_evaluates_over_arrow(literal: str, shape: str) -> None:
    selector = Selector(shape.format("'" + literal.replace("'", "''") + "'"))
    msgs = _messages()
    per_message = [selector.matches(m) for m in msgs]
    assert selector.evaluate_batch(messages_to_batch(msgs)).to_pylist() == per_message
