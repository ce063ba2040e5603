"""Who may do what to which address: users, roles, and per address-pattern permissions.

Modelled on ActiveMQ Artemis's ``security-settings``: each rule names an address pattern and,
per permission, the roles granted it. Patterns use Artemis's wildcards over ``.``-separated words:
``*`` matches exactly one word, ``#`` any number of words (zero included), so ``orders.#``
matches ``orders``, ``orders.eu`` and ``orders.eu.paid``; ``orders.*`` matches ``orders.eu``
only. For an address the single most specific matching rule applies (rules are not merged, as in
Artemis), and an address no rule matches is refused to everyone.

The permissions:

``send``              attach a producer to the address, or route a message to it through the
                      anonymous relay (checked per message there);
``consume``           attach a consumer (a queue receiver, or a topic subscription of any kind);
``browse``            attach a queue browser;
``create_temporary``  create a temporary queue or topic (checked against its generated address,
                      ``TempQueue-<n>-<t>`` or ``TempTopic-<n>-<t>``, one word: ``#`` or ``*``
                      rules match it); the creating connection may always send to, consume from and browse it;
``manage``            administer; reading the dead-letter queue (consume or browse) needs it.

Pure: no I/O, no proton. The broker's connection code asks :meth:`Authorization.refusal` at
attach time and gets ``None`` (allowed) or the sentence to send with ``amqp:unauthorized-access``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum

__all__ = ["AccessRule", "Authorization", "Permission", "pattern_matches"]


class Permission(Enum):
    SEND = "send"
    CONSUME = "consume"
    BROWSE = "browse"
    CREATE_TEMPORARY = "create_temporary"
    MANAGE = "manage"

    @property
    def verb(self) -> str:
        """How a refusal reads: 'may not <verb> <address>'."""
        return _VERBS[self]


_VERBS = {
    Permission.SEND: "send to",
    Permission.CONSUME: "consume from",
    Permission.BROWSE: "browse",
    Permission.CREATE_TEMPORARY: "create the temporary destination",
    Permission.MANAGE: "manage",
}


def _validate_pattern(pattern: str) -> None:
    if not pattern:
        raise ValueError("an address pattern must not be empty")
    for word in pattern.split("."):
        if ("#" in word or "*" in word) and len(word) != 1:
            raise ValueError(f"address pattern {pattern!r}: '#' and '*' must stand alone as a word")


def pattern_matches(pattern: str, address: str) -> bool:
    """Whether ``address`` matches the Artemis-style ``pattern`` (``*`` one word, ``#`` any)."""
    return _match(pattern.split("."), address.split("."))


def _match(pat: list[str], words: list[str]) -> bool:
    # the set of word positions reachable after each pattern word: O(pattern x address words),
    # whatever the pattern (the address is the peer's: no backtracking, no quadratic '#')
    positions = {0}
    for p in pat:
        nxt: set[int] = set()
        if p == "#":  # any number of words: everything from the earliest reachable position on
            nxt.update(range(min(positions), len(words) + 1))
        for i in positions if p != "#" else ():
            if i < len(words) and (p == "*" or p == words[i]):
                nxt.add(i + 1)
        if not nxt:
            return False
        positions = nxt
    return len(words) in positions


def _specificity(pattern: str) -> tuple[int, int, int]:
    """Sort key, most specific largest: more literal words, then fewer ``#``, then fewer ``*``."""
    words = pattern.split(".")
    literal = sum(1 for w in words if w not in ("#", "*"))
    return literal, -words.count("#"), -words.count("*")


@dataclass(frozen=True, slots=True)
class AccessRule:
    """One address pattern and, per permission, the roles granted it."""

    pattern: str
    grants: Mapping[Permission, frozenset[str]]

    def __post_init__(self) -> None:
        _validate_pattern(self.pattern)


@dataclass(frozen=True)
class Authorization:
    """The broker's access rules. ``user_roles`` maps each user name to its roles; a user not
    listed (an ANONYMOUS login, a certificate identity without an entry) has no roles."""

    user_roles: Mapping[str, frozenset[str]]
    rules: tuple[AccessRule, ...]
    dlq: str = "DLQ"
    _ordered: tuple[AccessRule, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        ordered = sorted(self.rules, key=lambda r: _specificity(r.pattern), reverse=True)
        object.__setattr__(self, "_ordered", tuple(ordered))

    @classmethod
    def build(
        cls,
        user_roles: Mapping[str, Iterable[str]],
        rules: Iterable[tuple[str, Mapping[str, Iterable[str]]]],
        *,
        dlq: str = "DLQ",
    ) -> Authorization:
        """From plain data: ``rules`` are ``(pattern, {"send": ["role", ...], ...})``."""
        built: list[AccessRule] = []
        for pattern, grants in rules:
            perms: dict[Permission, frozenset[str]] = {}
            for name, roles in grants.items():
                try:
                    perm = Permission(name)
                except ValueError:
                    known = ", ".join(p.value for p in Permission)
                    raise ValueError(f"unknown permission {name!r} (known: {known})") from None
                perms[perm] = frozenset(roles)
            built.append(AccessRule(pattern, perms))
        return cls({u: frozenset(r) for u, r in user_roles.items()}, tuple(built), dlq=dlq)

    def rule_for(self, address: str) -> AccessRule | None:
        """The most specific rule matching ``address`` (``None``: no rule, nobody may)."""
        for rule in self._ordered:
            if pattern_matches(rule.pattern, address):
                return rule
        return None

    def roles_of(self, user: str | None) -> frozenset[str]:
        return self.user_roles.get(user, frozenset()) if user is not None else frozenset()

    def allows(self, user: str | None, address: str, permission: Permission) -> bool:
        if address == self.dlq and permission in (Permission.CONSUME, Permission.BROWSE):
            permission = Permission.MANAGE  # the DLQ holds everyone's failures: managers only
        rule = self.rule_for(address)
        if rule is None:
            return False
        granted = rule.grants.get(permission, frozenset())
        return not granted.isdisjoint(self.roles_of(user))

    def refusal(self, user: str | None, address: str, permission: Permission) -> str | None:
        """``None`` if allowed, else the description a refused client is sent."""
        if self.allows(user, address, permission):
            return None
        who = f"user {user!r}" if user is not None else "an anonymous user"
        need = permission.value
        if address == self.dlq and permission in (Permission.CONSUME, Permission.BROWSE):
            need = f"{permission.value}, which on the dead-letter queue needs manage"
        return f"{who} may not {permission.verb} {address!r} (permission {need})"
