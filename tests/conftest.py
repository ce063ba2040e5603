"""Shared fixtures: the real peers every test tree uses.

* ``rabbitmq`` (session): a private RabbitMQ 3.10 + ``rabbitmq_amqp1_0`` on loopback
  (:class:`amqp_jms.testing.rabbitmq.RabbitMQ`); skipped with the reason when it cannot run here.
  Addresses are ``/queue/<name>`` and ``/topic/<name>``. Mark such tests ``@pytest.mark.rabbitmq``.
* ``broker`` (function): a fresh in-memory embedded broker (``amqp_jms.broker.Broker``), its
  ``.url`` on an ephemeral loopback port. ``broker_factory`` makes more (e.g. with a ``data_dir``
  to test restarts); all are stopped at the end of the test.
* ``broker_process`` (module): the embedded broker in a process of its own
  (:class:`amqp_jms.testing.broker_process.BrokerProcess`), for tests of a client's waits: a
  broker in the test's process answers only when the client's GIL lets it.
* ``rhea``: the :mod:`amqp_jms.testing.rhea` runner; skipped when node/rhea are missing. Mark such
  tests ``@pytest.mark.rhea``.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from amqp_jms.testing import rabbitmq as _rabbitmq
from amqp_jms.testing import rhea as _rhea


@pytest.fixture(scope="session")
def rabbitmq() -> Iterator[_rabbitmq.RabbitMQ]:
    """A running RabbitMQ with AMQP 1.0, shared by the whole session, stopped at its end."""
    reason = _rabbitmq.unavailable_reason()
    if reason is not None:
        pytest.skip(f"RabbitMQ unavailable: {reason}")
    with _rabbitmq.RabbitMQ() as rmq:
        yield rmq


def _broker_class() -> Any:
    # Imported lazily: the embedded broker is its own component and may not exist yet in a
    # given checkout; tests that do not use it must still run.
    try:
        from amqp_jms.broker import Broker
    except ImportError as e:
        pytest.skip(f"embedded broker not available: {e}")
    return Broker


@pytest.fixture
def broker_factory() -> Iterator[Callable[..., Any]]:
    """Call with ``Broker`` keyword arguments to start an embedded broker; all stop after the test."""
    started: list[Any] = []
    broker_cls = _broker_class()

    def make(**kwargs: Any) -> Any:
        kwargs.setdefault("port", 0)
        b = broker_cls(**kwargs)
        b.__enter__()
        started.append(b)
        return b

    try:
        yield make
    finally:
        for b in reversed(started):
            b.__exit__(None, None, None)


@pytest.fixture
def broker(broker_factory: Callable[..., Any]) -> Any:
    """A fresh in-memory embedded broker on an ephemeral loopback port (``broker.url``)."""
    return broker_factory(data_dir=None)


@pytest.fixture(scope="module")
def broker_process() -> Iterator[Any]:
    """The embedded broker in its own process, shared by a module's tests (``.url``)."""
    from amqp_jms.testing.broker_process import BrokerProcess

    b = BrokerProcess()
    try:
        yield b
    finally:
        b.stop()


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Certificates made for this run (``amqp_jms.testing.pki.make_pki``): server, client CA,
    a client certificate it signed (CN alice) and a rogue one it did not."""
    from amqp_jms.testing.pki import make_pki

    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def rhea() -> types.ModuleType:
    """The rhea runner module (``rhea.run(script, input)``, ``rhea.run_code``, ``rhea.start``)."""
    reason = _rhea.unavailable_reason()
    if reason is not None:
        pytest.skip(f"rhea unavailable: {reason}")
    return _rhea
