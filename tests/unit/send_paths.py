"""A fixture for the tests of waiting sends: each test on both paths, the C transfer-and-write
and answer read (``write_through``), where it is built, and the Python path it stands in for.
A test module takes it with ``from send_paths import send_path``."""

from __future__ import annotations

import pytest

from amqp_jms.provider.amqp import write_through


@pytest.fixture(autouse=True, params=["C", "Python"])
def send_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """``"C"`` or ``"Python"``: the path this run of the test takes."""
    if request.param == "Python":
        monkeypatch.setattr(write_through, "transfer_out", None)
        monkeypatch.setattr(write_through, "read_in", None)
    elif write_through.transfer_out is None:
        pytest.skip("the C accelerator _ctransfer was not built")
    return str(request.param)
