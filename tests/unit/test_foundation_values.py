"""Exceptions, destinations and typed values: the shared vocabulary of every layer."""

from __future__ import annotations

import pickle

import pytest

import amqp_jms
from amqp_jms import exceptions as ex
from amqp_jms.destination import (
    Queue,
    TemporaryQueue,
    TemporaryTopic,
    Topic,
    parse_destination,
)
from amqp_jms.types import Byte, Char, Float, Int, Short, UInt, ULong


def test_exception_hierarchy_matches_jms() -> None:
    # jakarta.jms.TransactionInProgressException extends JMSException, not IllegalStateException
    assert issubclass(ex.TransactionInProgressException, ex.JMSException)
    assert not issubclass(ex.TransactionInProgressException, ex.IllegalStateException)
    assert issubclass(ex.MessageFormatException, ex.JMSException)
    assert issubclass(ex.NumberFormatException, ValueError)
    assert not issubclass(ex.NumberFormatException, ex.JMSException)
    assert issubclass(ex.JMSRuntimeException, RuntimeError)


def test_jms_exception_keeps_error_code_and_linked_cause() -> None:
    cause = OSError("socket gone")
    e = ex.InvalidDestinationException("no such queue", "amqp:not-found", cause)
    assert e.get_error_code() == "amqp:not-found"
    assert e.get_linked_exception() is cause and e.__cause__ is cause
    assert "no such queue" in str(e) and "amqp:not-found" in str(e)


@pytest.mark.parametrize(
    ("checked", "runtime"),
    [
        (ex.IllegalStateException, ex.IllegalStateRuntimeException),
        (ex.TransactionRolledBackException, ex.TransactionRolledBackRuntimeException),
        (ex.InvalidSelectorException, ex.InvalidSelectorRuntimeException),
        (ex.MessageEOFException, ex.JMSRuntimeException),
    ],
)
def test_to_runtime_gives_the_unchecked_twin(checked: type, runtime: type) -> None:
    r = ex.to_runtime(checked("boom", "code"))
    assert type(r) is runtime
    assert r.error_code == "code"
    assert isinstance(r.__cause__, checked)


@pytest.mark.parametrize("checked", list(ex._RUNTIME_TWINS))
def test_a_checked_exception_and_its_twin_print_and_carry_the_same(checked: type[ex.JMSException]) -> None:
    cause = OSError("socket gone")
    for e in (checked("no such queue", "amqp:not-found", cause), checked("no such queue")):
        r = ex.to_runtime(e)
        assert str(r) == str(e) == ("no such queue [amqp:not-found]" if e.error_code else "no such queue")
        assert r.reason == e.reason and r.get_error_code() == e.get_error_code()
        assert e.__cause__ is e.linked_exception and r.__cause__ is e
    assert issubclass(checked, ex.JMSException) and not issubclass(checked, RuntimeError)
    assert issubclass(ex._RUNTIME_TWINS[checked], RuntimeError)
    assert not issubclass(ex._RUNTIME_TWINS[checked], ex.JMSException)


def test_destinations_are_values() -> None:
    assert Queue("a") == Queue("a")
    assert Queue("a") != Topic("a")
    assert hash(Queue("a")) == hash(Queue("a"))
    assert str(Queue("orders")) == "queue://orders"
    assert str(Topic("prices")) == "topic://prices"
    assert Queue("a").get_queue_name() == "a"
    assert isinstance(TemporaryQueue("t"), Queue)
    assert TemporaryQueue("t") != Queue("t")
    assert pickle.loads(pickle.dumps(Topic("x"))) == Topic("x")
    with pytest.raises(AttributeError):
        Queue("a").foo = 1


def test_destination_name_validation() -> None:
    with pytest.raises(TypeError):
        Queue(None)  # type: ignore[arg-type]
    with pytest.raises(ex.InvalidDestinationException):
        Queue("")


def test_parse_destination_round_trips_every_kind() -> None:
    for d in (Queue("q"), Topic("t"), TemporaryQueue("tq"), TemporaryTopic("tt")):
        assert parse_destination(str(d)) == d
    assert parse_destination("plain") == Queue("plain")
    assert parse_destination("plain", default=Topic) == Topic("plain")
    with pytest.raises(ex.InvalidDestinationException, match="unknown destination scheme"):
        parse_destination("http://x")


def test_temporary_destination_delete_needs_an_owner() -> None:
    t = TemporaryQueue("tmp-1")
    with pytest.raises(ex.IllegalStateException):
        t.delete()
    deleted: list[object] = []
    t.bind_deleter(deleted.append)
    t.delete()
    t.delete()  # idempotent
    assert deleted == [t] and t.deleted


@pytest.mark.parametrize(
    ("cls", "lo", "hi"),
    [(Byte, -128, 127), (Short, -32768, 32767), (Int, -(2**31), 2**31 - 1), (UInt, 0, 2**32 - 1),
     (ULong, 0, 2**64 - 1)],
)
def test_typed_ints_check_their_range(cls: type, lo: int, hi: int) -> None:
    assert cls(lo) == lo and cls(hi) == hi
    with pytest.raises(ValueError):
        cls(lo - 1)
    with pytest.raises(ValueError):
        cls(hi + 1)
    with pytest.raises(TypeError):
        cls("1")


def test_float_is_rounded_to_32_bits_like_java() -> None:
    assert Float(1.1) == 1.100000023841858
    assert isinstance(Float(1.1), float)
    with pytest.raises(ValueError):
        Float(1e39)


def test_char_is_one_character() -> None:
    assert Char("x") == "x"
    with pytest.raises(ValueError):
        Char("xy")


def test_package_exports_are_complete() -> None:
    for name in amqp_jms.__all__:
        assert hasattr(amqp_jms, name), name
    for name in ex.__all__:
        assert name in amqp_jms.__all__
