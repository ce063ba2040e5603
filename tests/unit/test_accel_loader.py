"""``load_accelerator``: the compiled module when it was built, None when it was not or when
``AMQP_JMS_NO_ACCEL`` asks for the pure-Python paths ("0" and empty mean use it)."""

from __future__ import annotations

import pytest

from amqp_jms._accel import load_accelerator


def test_a_module_that_was_not_built_gives_the_python_path() -> None:
    assert load_accelerator("amqp_jms.mq._no_such_accelerator") is None


@pytest.mark.parametrize(("value", "loaded"), [("1", False), ("yes", False), ("0", True), ("", True)])
def test_amqp_jms_no_accel_switches_every_accelerator_off(
    monkeypatch: pytest.MonkeyPatch, value: str, loaded: bool
) -> None:
    monkeypatch.setenv("AMQP_JMS_NO_ACCEL", value)
    # a module that is always importable stands in for a built accelerator
    assert (load_accelerator("amqp_jms.types") is not None) is loaded
