"""An invalid selector's error names the position and quotes only the part around it: a 40 KB
selector must not come back as a 40 KB message (log lines, AMQP error descriptions)."""

from __future__ import annotations

import pytest

from amqp_jms.exceptions import InvalidSelectorException
from amqp_jms.selector import Selector
from amqp_jms.selector.lexer import EXCERPT


def test_a_huge_invalid_selector_is_quoted_around_the_error_with_its_length() -> None:
    text = " OR ".join(f"id = 'value-{i}'" for i in range(3000)) + " OR id ="
    with pytest.raises(InvalidSelectorException) as err:
        Selector(text)
    message = str(err.value)
    assert len(message) < 2 * EXCERPT + 200
    assert f"position {len(text)}" in message
    assert f"of {len(text)})" in message  # the length note
    assert "id =" in message  # the part where it went wrong


def test_a_huge_string_literal_is_not_echoed() -> None:
    text = "a = 'x" + "y" * 40_000  # unterminated
    with pytest.raises(InvalidSelectorException) as err:
        Selector(text)
    assert len(str(err.value)) < 2 * EXCERPT + 200
    assert "position 4" in str(err.value)


def test_a_short_invalid_selector_is_quoted_whole() -> None:
    with pytest.raises(InvalidSelectorException, match=r"\(selector: 'a = = 1'\)"):
        Selector("a = = 1")
