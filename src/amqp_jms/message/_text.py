"""``TextMessage``: a body that is one String (or null)."""

from __future__ import annotations

from typing import Any

from ..exceptions import MessageFormatException
from ._base import Message
from ._data import BodyKind

__all__ = ["TextMessage"]


class TextMessage(Message):
    """A message whose body is a ``str`` (``javax.jms.TextMessage``): ``TextMessage("hi")``."""

    __slots__ = ("_text",)
    jms_type = "TextMessage"
    _text: str | None

    def __init__(self, text: str | None = None) -> None:
        self._init_headers()
        self._text = None
        if text is not None:
            self.set_text(text)

    def _init_body(self) -> None:
        self._text = None

    _body_kind = BodyKind.TEXT

    def _body_snapshot(self) -> str | None:
        return self._text

    def _restore_body(self, body: Any) -> None:
        self._text = body

    _adopt_received_body = _restore_body

    def _has_body(self) -> bool:
        return self._text is not None

    def _body_value(self) -> Any:
        return self._text

    def get_text(self) -> str | None:
        return self._text

    def set_text(self, text: str | None) -> None:
        self._check_body_writable()
        if text is not None and type(text) is not str:
            if not isinstance(text, str):
                raise MessageFormatException(f"TextMessage text must be a str, not {type(text).__name__}")
            text = str.__str__(text)
        self._text = text

    def _repr_body(self) -> str:
        text = self._text
        if text is None:
            return ""
        return f"text={text[:60]!r}{'…' if len(text) > 60 else ''}"
