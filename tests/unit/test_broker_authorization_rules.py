"""The broker's access rules as pure functions: wildcards, most-specific rule, the DLQ."""

from __future__ import annotations

import pytest

from amqp_jms.broker.routing.authorization import Authorization, Permission, pattern_matches

SEND, CONSUME, BROWSE = Permission.SEND, Permission.CONSUME, Permission.BROWSE
TEMP, MANAGE = Permission.CREATE_TEMPORARY, Permission.MANAGE


@pytest.mark.parametrize(
    ("pattern", "address", "matches"),
    [
        ("orders", "orders", True),
        ("orders", "orders.eu", False),
        ("orders.#", "orders", True),
        ("orders.#", "orders.eu", True),
        ("orders.#", "orders.eu.paid", True),
        ("orders.#", "ordersx", False),
        ("orders.*", "orders.eu", True),
        ("orders.*", "orders", False),
        ("orders.*", "orders.eu.paid", False),
        ("#", "anything.at.all", True),
        ("*.paid", "orders.paid", True),
        ("a.#.z", "a.z", True),
        ("a.#.z", "a.b.c.z", True),
        ("a.#.z", "a.b.c", False),
    ],
)
def test_wildcards(pattern: str, address: str, matches: bool) -> None:
    assert pattern_matches(pattern, address) is matches


def test_a_long_hostile_address_matches_in_linear_time() -> None:
    # the address is the peer's (up to a frame long): 30k words against several '#'
    import time

    address = ".".join(["a"] * 30_000)
    t0 = time.perf_counter()
    assert not pattern_matches("#.a.#.b.#.c.#", address)
    assert pattern_matches("#.a.#.#.a", address)
    assert time.perf_counter() - t0 < 2.0


def test_bad_patterns_are_refused() -> None:
    with pytest.raises(ValueError, match="stand alone"):
        Authorization.build({}, [("orders#", {"send": ["x"]})])
    with pytest.raises(ValueError, match="unknown permission 'write'"):
        Authorization.build({}, [("orders", {"write": ["x"]})])


@pytest.fixture
def auth() -> Authorization:
    return Authorization.build(
        {"alice": ["orders-producer"], "bob": ["orders-consumer"], "root": ["admin"]},
        [
            ("#", {"create_temporary": ["orders-consumer", "orders-producer"], "manage": ["admin"],
                   "consume": ["admin"], "browse": ["admin"], "send": ["admin"]}),
            ("orders.#", {"send": ["orders-producer"], "consume": ["orders-consumer"],
                          "browse": ["orders-consumer"]}),
            ("orders.audit", {"browse": ["admin"]}),
        ],
        dlq="DLQ",
    )


def test_roles_grant_per_pattern(auth: Authorization) -> None:
    assert auth.allows("alice", "orders.eu", SEND)
    assert not auth.allows("alice", "orders.eu", CONSUME)
    assert auth.allows("bob", "orders.eu", CONSUME)
    assert auth.allows("bob", "orders.eu", BROWSE)
    assert not auth.allows("bob", "orders.eu", SEND)
    assert not auth.allows("alice", "payroll", SEND)  # only the '#' rule: admins
    assert auth.allows("root", "payroll", SEND)


def test_most_specific_rule_wins_and_rules_do_not_merge(auth: Authorization) -> None:
    # orders.audit has its own rule: the orders.# grants do not apply there
    assert not auth.allows("bob", "orders.audit", CONSUME)
    assert not auth.allows("alice", "orders.audit", SEND)
    assert auth.allows("root", "orders.audit", BROWSE)


def test_unknown_and_anonymous_users_have_no_roles(auth: Authorization) -> None:
    assert not auth.allows("mallory", "orders.eu", SEND)
    assert not auth.allows(None, "orders.eu", SEND)


def test_no_matching_rule_refuses_everyone() -> None:
    only = Authorization.build({"root": ["admin"]}, [("orders.#", {"send": ["admin"]})])
    assert not only.allows("root", "payroll", SEND)


def test_dead_letter_queue_is_read_by_managers_only(auth: Authorization) -> None:
    everyone = Authorization.build({"bob": ["c"], "root": ["admin"]},
                                   [("#", {"consume": ["c", "admin"], "browse": ["c"], "manage": ["admin"]})])
    assert everyone.allows("bob", "orders", CONSUME)
    assert not everyone.allows("bob", "DLQ", CONSUME)
    assert not everyone.allows("bob", "DLQ", BROWSE)
    assert everyone.allows("root", "DLQ", CONSUME)
    assert everyone.allows("root", "DLQ", BROWSE)


def test_temporary_destinations(auth: Authorization) -> None:
    assert auth.allows("bob", "TempQueue-7-123456", TEMP)
    assert not auth.allows("mallory", "TempQueue-7-123456", TEMP)


def test_refusal_names_user_address_and_permission(auth: Authorization) -> None:
    assert auth.refusal("alice", "orders.eu", SEND) is None
    text = auth.refusal("alice", "orders.eu", CONSUME)
    assert text == "user 'alice' may not consume from 'orders.eu' (permission consume)"
    dlq = auth.refusal("bob", "DLQ", CONSUME)
    assert dlq is not None and "'DLQ'" in dlq and "manage" in dlq
    anon = auth.refusal(None, "orders.eu", BROWSE)
    assert anon is not None and anon.startswith("an anonymous user may not browse 'orders.eu'")
