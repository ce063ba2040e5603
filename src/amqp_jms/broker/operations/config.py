"""The broker's one configuration file (TOML), read with the standard library's ``tomllib``.

Every key is validated when the file is loaded, and a mistake is a :class:`ConfigError` naming
the file, the line and the key (``broker.toml:14: [users.alice] password: ...``), so a broker
never starts half-configured. The file holds listener (and the metrics endpoint), TLS, store,
dead-letter policy, login policy, users (with hashed passwords) and their roles, per
address-pattern permissions, limits and the address prefixes; command-line flags override single
values (:func:`with_overrides`).
``docs/broker.md`` has a commented example (also ``examples/broker.toml``).

Plain-text passwords are refused unless ``[login] allow_plain_passwords = true`` (then each one
is warned about): hashes come from ``amqp-jms broker --hash-password``.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._logs import BROKER as log
from ..limits import BrokerLimits, LimitError
from ..protocol.sasl import Users
from ..protocol.scram import is_password_hash, parse_password_hash
from ..routing.authorization import AccessRule, Authorization, Permission
from .metrics import QUEUE_LABELS
from .metrics_http import parse_listen

__all__ = ["BrokerConfig", "ConfigError", "load_config", "with_overrides"]


class ConfigError(ValueError):
    """The configuration file is wrong; the message names the file, line and key."""


@dataclass(frozen=True)
class BrokerConfig:
    """Everything the file can set; the defaults are the broker's own."""

    host: str = "127.0.0.1"
    port: int = 5672
    idle_timeout_s: float | None = None
    container_id: str = "amqp-jms-broker"
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_ca: str | None = None
    require_client_certificate: bool = False  # [tls] require_client_certificate: mutual TLS for all
    data_dir: str | None = None
    dlq: str = "DLQ"
    max_delivery_attempts: int = 0
    users: Users | None = None  # None: anyone may connect (ANONYMOUS, any PLAIN)
    authorization: Authorization | None = None  # None: a logged-in user may do anything
    max_failed_logins: int = 10
    failed_login_window_s: float = 60.0
    limits: BrokerLimits | None = None  # None: the defaults
    address_prefixes: tuple[str, str] | None = None
    metrics: str | None = None  # "host:port" of the Prometheus endpoint; None = off
    metrics_token: str | None = None  # what /metrics asks for (Bearer or Basic password); None = open
    metrics_queue_labels: str = "names"  # how /metrics names queues: names, hashed, none (QUEUE_LABELS)
    console: bool = False  # the web console on the metrics listener (127.0.0.1:8161 without one)
    console_allow_anonymous_actions: bool = False  # a broker without users: may anyone act?
    ws_port: int | None = None  # the WebSocket listener's port (0 = any free one); None = off
    ws_path: str = "/"  # the path the WebSocket listener answers at
    token_validator: Any = None  # XOAUTH2: [login] xoauth2_jwt_key (a JwtValidator); None = off

    def broker_options(self) -> dict[str, Any]:
        """Keyword arguments for :class:`~amqp_jms.broker.AsyncBroker` / ``Broker``."""
        opts: dict[str, Any] = {
            "host": self.host, "port": self.port, "data_dir": self.data_dir, "users": self.users,
            "tls_cert": self.tls_cert, "tls_key": self.tls_key, "tls_ca": self.tls_ca,
            "require_client_certificate": self.require_client_certificate,
            "dlq": self.dlq, "max_delivery_attempts": self.max_delivery_attempts,
            "idle_timeout_s": self.idle_timeout_s, "container_id": self.container_id,
            "authorization": self.authorization, "max_failed_logins": self.max_failed_logins,
            "failed_login_window_s": self.failed_login_window_s,
            "ws_port": self.ws_port, "ws_path": self.ws_path, "token_validator": self.token_validator,
        }
        if self.limits is not None:
            opts["limits"] = self.limits
        if self.address_prefixes is not None:
            opts["address_prefixes"] = self.address_prefixes
        if self.metrics is not None:
            opts["metrics"] = self.metrics
        if self.metrics_token is not None:
            opts["metrics_token"] = self.metrics_token
        if self.metrics_queue_labels != "names":
            opts["metrics_queue_labels"] = self.metrics_queue_labels
        if self.console:
            opts["console"] = True
            opts["console_allow_anonymous_actions"] = self.console_allow_anonymous_actions
        return opts


def with_overrides(config: BrokerConfig, **flags: Any) -> BrokerConfig:
    """``config`` with the given command-line values (``None`` = flag not given) replacing its own."""
    given = {k: v for k, v in flags.items() if v is not None}
    return dataclasses.replace(config, **given) if given else config


# -- locating keys in the text (tomllib keeps no positions) --------------------------------------
_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?")
_KEY = re.compile(r"^\s*(\"[^\"]*\"|'[^']*'|[A-Za-z0-9_\-]+)\s*=")


def _norm(name: str) -> str:
    return ".".join(part.strip().strip("\"'") for part in name.split("."))


class _Lines:
    """Which line set ``table.key`` (and where each table began), for error messages."""

    def __init__(self, text: str) -> None:
        self.keys: dict[str, int] = {}
        counts: dict[str, int] = {}
        table = ""
        for n, line in enumerate(text.splitlines(), 1):
            if line.lstrip().startswith("#"):
                continue
            m = _HEADER.match(line)
            if m:
                table = _norm(m.group(2))
                if m.group(1) == "[[":
                    i = counts.get(table, 0)
                    counts[table] = i + 1
                    table = f"{table}[{i}]"
                self.keys.setdefault(table, n)
                continue
            k = _KEY.match(line)
            if k:
                key = _norm(k.group(1))
                self.keys.setdefault(f"{table}.{key}" if table else key, n)

    def line(self, table: str, key: str | None = None) -> int | None:
        if key is not None:
            found = self.keys.get(f"{table}.{key}" if table else key)
            if found is not None:
                return found
        return self.keys.get(table)


class _Reader:
    """Validates one file, raising ConfigError with the position of the offending key."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = _Lines(text)

    def error(self, table: str, key: str | None, problem: str) -> ConfigError:
        n = self.lines.line(table, key)
        where = f"{self.path}:{n}" if n is not None else str(self.path)
        label = f"[{table}] " if table else ""
        return ConfigError(f"{where}: {label}{key + ': ' if key else ''}{problem}")

    def table(self, data: dict[str, Any], name: str, known: set[str]) -> dict[str, Any]:
        value = data.get(name, {})
        if not isinstance(value, dict):
            raise self.error("", name, "expected a table")
        for key in value:
            if key not in known:
                raise self.error(name, key, f"unknown key (known: {', '.join(sorted(known))})")
        return value

    def get(
        self, tbl: dict[str, Any], table: str, key: str, kind: type | tuple[type, ...], default: Any
    ) -> Any:
        if key not in tbl:
            return default
        value = tbl[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if isinstance(value, bool) and bool not in kinds:
            raise self.error(table, key, f"expected {_kind_name(kinds)}, got {value!r}")
        if not isinstance(value, kinds):
            raise self.error(table, key, f"expected {_kind_name(kinds)}, got {value!r}")
        if float in kinds and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        return value

    def strings(self, tbl: dict[str, Any], table: str, key: str) -> list[str]:
        value = tbl.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(table, key, f"expected a list of strings, got {value!r}")
        return list(value)

    def file_path(self, tbl: dict[str, Any], table: str, key: str, *, must_exist: bool) -> str | None:
        value = self.get(tbl, table, key, str, None)
        if value is None:
            return None
        p = Path(value).expanduser()
        if not p.is_absolute():
            p = self.path.parent / p  # relative to the configuration file
        if must_exist and not p.is_file():
            raise self.error(table, key, f"no such file: {str(p)!r}")
        return str(p)


def _kind_name(kinds: tuple[type, ...]) -> str:
    names = {str: "a string", int: "an integer", float: "a number", bool: "true or false", list: "a list"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


_TOP = {"listener", "tls", "store", "dead_letter", "login", "users", "permissions", "limits",
        "address_prefixes"}


def load_config(path: str | Path) -> BrokerConfig:
    """Read and validate a broker configuration file; :class:`ConfigError` on any mistake."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the configuration file: {e.strerror or e}") from e
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from e
    r = _Reader(path, text)
    for key in data:
        if key not in _TOP:
            raise r.error("", key, f"unknown key (known: {', '.join(sorted(_TOP))})")

    listener = r.table(data, "listener", {"host", "port", "idle_timeout", "container_id", "metrics",
                                          "metrics_token", "metrics_queue_labels", "console",
                                          "console_allow_anonymous_actions",
                                          "ws_port", "ws_path"})
    port = r.get(listener, "listener", "port", int, 5672)
    if not 0 <= port <= 65535:
        raise r.error("listener", "port", f"expected 0..65535, got {port}")
    ws_port = r.get(listener, "listener", "ws_port", int, None)
    if ws_port is not None and not 0 <= ws_port <= 65535:
        raise r.error("listener", "ws_port", f"expected 0..65535, got {ws_port}")
    ws_path = r.get(listener, "listener", "ws_path", str, "/")
    if not ws_path.startswith("/"):
        raise r.error("listener", "ws_path", f"expected a path starting with '/', got {ws_path!r}")
    idle = r.get(listener, "listener", "idle_timeout", float, None)
    metrics = r.get(listener, "listener", "metrics", str, None)
    if metrics is not None:
        try:
            parse_listen(metrics)
        except ValueError as e:
            raise r.error("listener", "metrics", str(e)) from None
    queue_labels = r.get(listener, "listener", "metrics_queue_labels", str, "names")
    if queue_labels not in QUEUE_LABELS:
        raise r.error("listener", "metrics_queue_labels", f"expected one of {', '.join(QUEUE_LABELS)}, "
                      f"got {queue_labels!r}")
    if idle is not None and idle < 0:
        raise r.error("listener", "idle_timeout", "expected seconds >= 0")

    tls = r.table(data, "tls", {"cert", "key", "ca", "require_client_certificate"})
    cert = r.file_path(tls, "tls", "cert", must_exist=True)
    tls_key = r.file_path(tls, "tls", "key", must_exist=True)
    ca = r.file_path(tls, "tls", "ca", must_exist=True)
    if (cert is None) != (tls_key is None):
        raise r.error("tls", "cert" if cert is None else "key", "cert and key must be given together")
    if ca is not None and cert is None:
        raise r.error("tls", "ca", "client certificates (ca) need the broker's own cert and key")
    require_cert = r.get(tls, "tls", "require_client_certificate", bool, False)
    if require_cert and ca is None:
        raise r.error("tls", "require_client_certificate", "needs ca (the CA client certificates chain to)")

    store = r.table(data, "store", {"data_dir"})
    data_dir = r.file_path(store, "store", "data_dir", must_exist=False)

    dead = r.table(data, "dead_letter", {"queue", "max_delivery_attempts"})
    dlq = r.get(dead, "dead_letter", "queue", str, "DLQ")
    attempts = r.get(dead, "dead_letter", "max_delivery_attempts", int, 0)
    if attempts < 0:
        raise r.error("dead_letter", "max_delivery_attempts", "expected a count >= 0 (0 = never)")

    login = r.table(data, "login", {"anonymous", "allow_plain_passwords", "max_failed", "failed_window",
                                    "xoauth2_jwt_key", "xoauth2_jwt_algorithms", "xoauth2_audience",
                                    "xoauth2_issuer"})
    jwt_key = r.file_path(login, "login", "xoauth2_jwt_key", must_exist=True)
    token_validator = None
    if jwt_key is not None:
        from ..routing.tokens import JwtValidator

        algorithms = r.get(login, "login", "xoauth2_jwt_algorithms", list, ["RS256"])
        if not algorithms or not all(isinstance(a, str) for a in algorithms):
            raise r.error("login", "xoauth2_jwt_algorithms", 'expected a list of names, e.g. ["RS256"]')
        token_validator = JwtValidator.from_file(
            jwt_key, algorithms=algorithms, audience=r.get(login, "login", "xoauth2_audience", str, None),
            issuer=r.get(login, "login", "xoauth2_issuer", str, None))
    max_failed = r.get(login, "login", "max_failed", int, 10)
    window = r.get(login, "login", "failed_window", float, 60.0)
    if max_failed < 0 or window < 0:
        raise r.error("login", "max_failed" if max_failed < 0 else "failed_window", "expected a value >= 0")
    users, roles = _users(r, data, login)
    authorization = _permissions(r, data, roles, dlq)
    if authorization is not None and (users is None or (users.anonymous and not users.passwords)):
        raise r.error("permissions[0]", None, "permissions need users with passwords ([users.<name>]): "
                      "without them PLAIN takes any name with any password")

    limits = None
    if "limits" in data:
        limits = _limits(r, data["limits"])

    prefixes = None
    if "address_prefixes" in data:
        value = data["address_prefixes"]
        if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)):
            want = 'expected ["<queue prefix>", "<topic prefix>"]'
            raise r.error("", "address_prefixes", f"{want}, got {value!r}")
        prefixes = (value[0], value[1])

    return BrokerConfig(
        host=r.get(listener, "listener", "host", str, "127.0.0.1"),
        port=port,
        idle_timeout_s=idle,
        container_id=r.get(listener, "listener", "container_id", str, "amqp-jms-broker"),
        tls_cert=cert, tls_key=tls_key, tls_ca=ca, require_client_certificate=require_cert,
        data_dir=data_dir,
        dlq=dlq, max_delivery_attempts=attempts,
        users=users, authorization=authorization,
        max_failed_logins=max_failed, failed_login_window_s=window, token_validator=token_validator,
        limits=limits, address_prefixes=prefixes, metrics=metrics,
        metrics_token=r.get(listener, "listener", "metrics_token", str, None),
        metrics_queue_labels=queue_labels,
        console=r.get(listener, "listener", "console", bool, False),
        ws_port=ws_port, ws_path=ws_path,
        console_allow_anonymous_actions=r.get(listener, "listener", "console_allow_anonymous_actions", bool,
                                              False),
    )


def _users(
    r: _Reader, data: dict[str, Any], login: dict[str, Any]
) -> tuple[Users | None, dict[str, list[str]]]:
    anonymous = r.get(login, "login", "anonymous", bool, None)
    allow_plain = r.get(login, "login", "allow_plain_passwords", bool, False)
    table = data.get("users", {})
    if not isinstance(table, dict):
        raise r.error("", "users", "expected tables [users.<name>]")
    passwords: dict[str, str] = {}
    roles: dict[str, list[str]] = {}
    for name, entry in table.items():
        where = f"users.{name}"
        if not isinstance(entry, dict):
            raise r.error("users", name, "expected a table [users.<name>] with password and roles")
        for k in entry:
            if k not in ("password", "roles"):
                raise r.error(where, k, "unknown key (known: password, roles)")
        roles[name] = r.strings(entry, where, "roles")
        pw = r.get(entry, where, "password", str, None)
        if pw is None:
            continue  # roles only: a certificate identity (SASL EXTERNAL), no password login
        if is_password_hash(pw):
            try:
                parse_password_hash(pw)
            except ValueError as e:
                raise r.error(where, "password", str(e)) from None
        elif allow_plain:
            n = r.lines.line(where, "password")
            log.warning("%s:%s: user %r has a plain-text password; store a hash "
                        "(amqp-jms broker --hash-password)", r.path, n, name)
        else:
            raise r.error(where, "password", "plain-text password refused: store a hash made with "
                          "'amqp-jms broker --hash-password' (or set [login] allow_plain_passwords = true)")
        passwords[name] = pw
    if not table and anonymous is None:
        return None, roles  # nobody listed: anyone may connect, as without a file
    return Users(passwords, anonymous=bool(anonymous)), roles


def _permissions(
    r: _Reader, data: dict[str, Any], roles: dict[str, list[str]], dlq: str
) -> Authorization | None:
    rules = data.get("permissions")
    if rules is None:
        return None
    if not isinstance(rules, list):
        raise r.error("", "permissions", "expected [[permissions]] tables")
    known = {"match"} | {p.value for p in Permission}
    built: list[AccessRule] = []
    for i, rule in enumerate(rules):
        where = f"permissions[{i}]"
        if not isinstance(rule, dict):
            raise r.error(where, None, "expected a table")
        for k in rule:
            if k not in known:
                raise r.error(where, k, f"unknown key (known: {', '.join(sorted(known))})")
        pattern = r.get(rule, where, "match", str, None)
        if pattern is None:
            raise r.error(where, None, "a permission rule needs match = \"<address pattern>\"")
        grants = {Permission(k): frozenset(r.strings(rule, where, k)) for k in rule if k != "match"}
        try:
            built.append(AccessRule(pattern, grants))
        except ValueError as e:
            raise r.error(where, "match", str(e)) from None
    return Authorization({u: frozenset(rs) for u, rs in roles.items()}, tuple(built), dlq=dlq)


def _limits(r: _Reader, table: Any) -> BrokerLimits:
    """The ``[limits]`` table read by the limits' own reader (one home for what each limit may be)."""
    if not isinstance(table, dict):
        raise r.error("", "limits", "expected a table")
    try:
        return BrokerLimits.from_mapping(table)
    except LimitError as e:
        raise r.error("limits", e.key, str(e)) from None
