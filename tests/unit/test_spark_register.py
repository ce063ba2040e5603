"""register(spark) makes both of our formats available, so a migration pipeline needs one call."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("pyspark")

from amqp_jms.spark import register


class _Registry:
    def __init__(self) -> None:
        self.names: list[str] = []

    def register(self, cls: Any) -> None:
        self.names.append(cls.name())


class _Session:
    def __init__(self) -> None:
        self.dataSource = _Registry()


def test_register_adds_jms_and_mq_dump_formats() -> None:
    session = _Session()
    register(session)
    assert sorted(session.dataSource.names) == ["jms", "jms-mq-dump"]
