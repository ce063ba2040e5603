"""The simplified API's one exception rule: checked JMS exceptions leave it as their unchecked
twins (JMS 2.0 section 12.1), shared by JMSContext, JMSProducer and JMSConsumer."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ..exceptions import JMSException, to_runtime

__all__ = ["runtime"]


@contextlib.contextmanager
def runtime() -> Iterator[None]:
    """Checked JMS exceptions leave the simplified API as their unchecked twins."""
    try:
        yield
    except JMSException as e:
        raise to_runtime(e) from e
