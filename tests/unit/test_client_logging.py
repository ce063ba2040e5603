"""Logging as a Python library should: named loggers per layer, no handlers of its own, and one
WARNING line naming the connection and the reason when a connection fails."""

from __future__ import annotations

import importlib
import logging
import time

import pytest
from proton import Message as PMessage
from proton import byte, symbol

from amqp_jms import ConnectionFactory, Queue
from amqp_jms._logs import LAYERS
from amqp_jms.testing.peer import TestPeer

FAST = "?jms.closeTimeout=2000&jms.requestTimeout=5000"


def test_no_library_logger_has_handlers() -> None:
    for module in ("amqp_jms.client", "amqp_jms.aio", "amqp_jms.provider.amqp", "amqp_jms.broker",
                   "amqp_jms.mq", "amqp_jms.spark", "amqp_jms.testing.peer", "amqp_jms.provider.frames"):
        importlib.import_module(module)
    names = [n for n in logging.root.manager.loggerDict if n == "amqp_jms" or n.startswith("amqp_jms.")]
    assert {lg.name for lg in LAYERS} <= set(names)
    for name in names:
        lg = logging.root.manager.loggerDict[name]
        if isinstance(lg, logging.Logger):
            assert lg.handlers == [], f"{name} has handlers {lg.handlers}"
            assert lg.propagate, name


def test_a_connection_failure_is_one_warning_naming_the_connection_and_the_reason(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="amqp_jms")
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        with ConnectionFactory(peer.url + FAST).create_connection() as conn:
            conn.create_session()
            cid = conn.connection_id()
            heard: list[object] = []
            conn.set_exception_listener(heard.append)
            peer.wait()
            peer.close_connection(("amqp:internal-error", "the disk caught fire"))
            for _ in range(200):
                if heard:
                    break
                time.sleep(0.01)
            assert heard
    warnings = [r for r in caplog.records if r.name.startswith("amqp_jms") and r.levelno >= logging.WARNING]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    (w,) = warnings
    assert w.name == "amqp_jms.provider" and w.levelno == logging.WARNING
    assert w.connection_id == cid  # type: ignore[attr-defined]
    assert cid in w.getMessage() and "the disk caught fire" in w.getMessage()
    assert not [r for r in caplog.records if r.name.startswith("amqp_jms") and r.levelno == logging.INFO]


def test_a_clean_close_logs_nothing_at_info_or_above(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="amqp_jms")
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_end()
        peer.expect_close()
        with ConnectionFactory(peer.url + FAST).create_connection() as conn:
            conn.create_session()
        peer.wait()
    assert not [r for r in caplog.records if r.name.startswith("amqp_jms")]


def test_a_skipped_unreadable_message_is_one_warning_naming_connection_session_and_link(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="amqp_jms")
    poison = PMessage(body="?", annotations={symbol("x-opt-jms-msg-type"): byte(9)})
    ok = PMessage(body="ok", annotations={symbol("x-opt-jms-msg-type"): byte(5)})
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach()
        peer.expect_flow(send=[poison, ok])
        peer.expect_disposition()
        peer.expect_disposition()
        with ConnectionFactory(peer.url + FAST).create_connection() as conn:
            consumer = conn.create_session().create_consumer(Queue("q"))
            conn.start()
            m = consumer.receive(2000)
            assert m is not None and m.get_body(str) == "ok"
            cid = conn.connection_id()
            peer.wait()
    (w,) = [r for r in caplog.records if r.name.startswith("amqp_jms") and r.levelno >= logging.INFO]
    assert w.name == "amqp_jms.client" and w.levelno == logging.WARNING
    assert w.connection_id == cid  # type: ignore[attr-defined]
    assert w.session_id.startswith(cid + ":")  # type: ignore[attr-defined]
    assert w.link.startswith("qpid-jms:receiver:" + w.session_id)  # type: ignore[attr-defined]
    assert f"[connection={cid} session={w.session_id} link={w.link}]" in w.getMessage()  # type: ignore[attr-defined]
