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

#: what a blocking class has and its asyncio twin deliberately has not, and why
NOT_TWINNED: dict[type, dict[str, str]] = {
    Connection: {
        # the ProviderListener callbacks: the provider calls the core, never the application
        "on_connection_established": "provider callback", "on_connection_interrupted": "provider callback",
        "on_connection_restored": "provider callback", "on_connection_failure": "provider callback",
        "on_async_exception": "provider callback",
    },
    MessageConsumer: {
        "receive_body_within": "JMSConsumer.receive_body's seconds-based twin: the async one is "
                               "AsyncConsumer.receive_body",
        "receive_local": "the core's never-ask-the-peer receive: AsyncConsumer.receive_no_wait is it",
        "receive_body_local": "the core's never-ask-the-peer receive_body: AsyncJMSConsumer uses it",
        "receive_encoded_local": "the core's never-ask-the-peer receive_encoded: "
                                 "AsyncConsumer.receive_encoded_no_wait is it",
        "encoded": "the core's EncodedMessage builder, shared by both faces",
    },
    JMSContext: {
        "connection": "the blocking Connection behind the context: reach it through .sync",
        "session": "the blocking Session behind the context: reach it through .sync",
    },
    JMSConsumer: {"consumer": "the blocking MessageConsumer: AsyncJMSConsumer.consumer is the async one"},
}

#: the core's internals, still public (issue 32 moves them off the JMS classes)
INTERNALS: dict[type, set[str]] = {
    Connection: {"capabilities", "check_open", "close_timeout", "config", "connection_id", "forget_session",
                 "own_temporary", "owns_temporary", "provider", "provider_alive", "refuse_on_dispatcher",
                 "request_timeout", "sent_user_id", "sessions", "started", "subscriptions", "wait_provider",
                 "wait_started"},
    Session: {"after_receive", "after_stop", "check_open", "close_consumer", "close_producer", "closed",
              "connection", "connection_failed", "consumers", "dispatcher", "index", "listener_changed",
              "open_consumer", "prepare_delivery", "provider_session", "set_running"},
    MessageProducer: {"check_open", "mark_closed", "provider_producer", "resolve_send_args", "send_resolved",
                      "send_timeout"},
    MessageConsumer: {"check_can_receive", "check_open", "deliver", "drain_timeout", "local_queue",
                      "local_selector", "mark_closed", "prefetch", "provider_consumer", "receive_flow",
                      "request", "top_up"},
    QueueBrowser: {"check_open"},
    JMSContext: {"check_open", "message_producer"},
}


def _params(fn: object) -> list[str]:
    # (a private keyword, Session.create_consumer's _spec, is the core's: issue 32 removes it)
    return [p for p in inspect.signature(fn).parameters if not p.startswith("_")]  # type: ignore[arg-type]


def _public(cls: type) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_")}


@pytest.mark.parametrize(("sync", "aio"), TWINS, ids=[s.__name__ for s, _ in TWINS])
def test_the_asyncio_twin_has_every_public_method(sync: type, aio: type) -> None:
    skipped = set(NOT_TWINNED.get(sync, {})) | INTERNALS.get(sync, set())
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
    listed = set(NOT_TWINNED.get(sync, {})) | INTERNALS.get(sync, set())
    assert listed <= _public(sync), f"stale exceptions for {sync.__name__}: {sorted(listed - _public(sync))}"


def test_the_check_finds_a_missing_twin() -> None:
    class Blocking:
        def start(self) -> None: ...

        def stop(self) -> None: ...

    class Async:
        async def start(self) -> None: ...

    assert _public(Blocking) - _public(Async) == {"stop"}
