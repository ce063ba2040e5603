"""Every public method of a blocking JMS class has its twin on the asyncio face.

Generated from the blocking classes: a method (or property) added to ``Session`` and forgotten
in ``AsyncSession`` fails here, as does a twin whose parameters differ. The exceptions are
listed with the reason each is deliberate.
"""

from __future__ import annotations

import inspect

import pytest

from amqp_jms.aio import (
    AsyncConnection,
    AsyncConsumer,
    AsyncJMSConsumer,
    AsyncJMSContext,
    AsyncJMSProducer,
    AsyncProducer,
    AsyncQueueBrowser,
    AsyncSession,
)
from amqp_jms.client import (
    Connection,
    JMSConsumer,
    JMSContext,
    JMSProducer,
    MessageConsumer,
    MessageProducer,
    QueueBrowser,
    Session,
)

TWINS = [
    (Connection, AsyncConnection),
    (Session, AsyncSession),
    (MessageProducer, AsyncProducer),
    (MessageConsumer, AsyncConsumer),
    (QueueBrowser, AsyncQueueBrowser),
    (JMSContext, AsyncJMSContext),
    (JMSProducer, AsyncJMSProducer),
    (JMSConsumer, AsyncJMSConsumer),
]

#: what a blocking class has and its asyncio twin deliberately has not, and why (what the
#: client's objects use of each other is on ``<object>.internal``, an instance attribute off
#: the JMS API, and not compared)
NOT_TWINNED: dict[type, dict[str, str]] = {
    Session: {name: "the application server facility (JMS 8.2.1): a server session pool's session is "
                    "a blocking Session, run on the loop by AsyncServerSessionPool"
              for name in ("set_message_listener", "get_message_listener", "run")},
    JMSConsumer: {"consumer": "the blocking MessageConsumer: AsyncJMSConsumer.consumer is the async one"},
}


def _params(fn: object) -> list[str]:
    return list(inspect.signature(fn).parameters)  # type: ignore[arg-type]


def _public(cls: type) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_")}


@pytest.mark.parametrize(("sync", "aio"), TWINS, ids=[s.__name__ for s, _ in TWINS])
def test_the_asyncio_twin_has_every_public_method(sync: type, aio: type) -> None:
    skipped = set(NOT_TWINNED.get(sync, {}))
    missing = sorted(_public(sync) - skipped - _public(aio))
    assert not missing, f"{aio.__name__} lacks {missing} of {sync.__name__}"


@pytest.mark.parametrize(("sync", "aio"), TWINS, ids=[s.__name__ for s, _ in TWINS])
def test_the_twins_take_the_same_parameters(sync: type, aio: type) -> None:
    differ = []
    for name in sorted(_public(sync) & _public(aio)):
        s, a = inspect.getattr_static(sync, name), inspect.getattr_static(aio, name)
        if not (inspect.isfunction(s) and inspect.isfunction(a)):
            continue
        if _params(s) != _params(a):
            differ.append(f"{name}{inspect.signature(s)} vs {inspect.signature(a)}")
    assert not differ, f"{aio.__name__} differs from {sync.__name__}: {differ}"


@pytest.mark.parametrize(("sync", "aio"), TWINS, ids=[s.__name__ for s, _ in TWINS])
def test_the_exceptions_name_what_the_blocking_class_has(sync: type, aio: type) -> None:
    listed = set(NOT_TWINNED.get(sync, {}))
    assert listed <= _public(sync), f"stale exceptions for {sync.__name__}: {sorted(listed - _public(sync))}"


def test_the_check_finds_a_missing_twin() -> None:
    class Blocking:
        def start(self) -> None: ...

        def stop(self) -> None: ...

    class Async:
        async def start(self) -> None: ...

    assert _public(Blocking) - _public(Async) == {"stop"}
