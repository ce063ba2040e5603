"""``jndi.properties`` as Qpid JMS's ``JmsInitialContextFactory`` reads it, or the same content in
TOML: so a Python service and its Java neighbours are configured from one file.

::

    # jndi.properties
    connectionfactory.orders = amqp://${BROKER_HOST:-localhost}:5672?jms.prefetchPolicy.all=50
    property.connectionfactory.orders.clientID = billing
    property.connectionfactory.orders.username = ${BROKER_USER}
    queue.ordersQueue = orders
    topic.prices = market.prices

    ctx = InitialContext("jndi.properties")            # or .toml; or a dict of the same keys
    factory = ctx.lookup("orders")                     # a ConnectionFactory
    queue = ctx.lookup("ordersQueue")                  # Queue("orders")
    ctx.lookup("dynamicQueues/anything")               # Queue("anything"), as Qpid JMS

What Qpid JMS does, and so this module:

* ``connectionfactory.<name> = <url>`` binds a factory (the ``connectionfactory.`` prefix in any
  case); with none, ``ConnectionFactory``, ``QueueConnectionFactory`` and
  ``TopicConnectionFactory`` are bound to ``amqp://localhost:5672``;
* ``default.connectionfactory.<option>`` applies to every factory,
  ``property.connectionfactory.<name>.<option>`` to one. Options are ``JmsConnectionFactory``'s
  bean properties: ``remoteURI``, ``username``, ``password``, and the ``jms.`` URL options
  without their prefix (``clientID``, ``prefetchPolicy.all``, ``redeliveryPolicy.maxRedeliveries``);
  an option the client does not know fails the lookup naming it;
* ``queue.<name> = <queue name>``, ``topic.<name> = <topic name>``;
* ``${VAR}`` and ``${VAR:-default}`` in any value are expanded from the process environment,
  then from the file's own keys; a variable with neither and no default is an error naming it
  (Java system properties, which Qpid JMS looks at first, have no Python equivalent).

TOML: the same keys, as dotted keys or tables (``[connectionfactory] orders = "amqp://..."``,
``[property.connectionfactory.orders] clientID = "billing"``, ``[queue] ordersQueue = "orders"``);
nested tables are flattened back into the dotted names.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .destination import Destination, Queue, Topic
from .exceptions import JMSException

__all__ = ["DEFAULT_FACTORY_NAMES", "InitialContext", "NamingException", "expand", "read_properties"]

DEFAULT_FACTORY_NAMES = ("ConnectionFactory", "QueueConnectionFactory", "TopicConnectionFactory")
DEFAULT_URL = "amqp://localhost:5672"
_FACTORY = "connectionfactory."
_DEFAULT = "default.connectionfactory."
_PROPERTY = "property.connectionfactory."
_VAR = re.compile(r"\$\{([^}:]+)(?::-([^}]*))?\}")


class NamingException(JMSException):
    """A name that is not bound, a file that cannot be read, a variable that cannot be resolved
    (``javax.naming.NamingException``'s role)."""


def expand(value: str, environment: Mapping[str, str], env: Mapping[str, str] | None = None) -> str:
    """``${VAR}`` / ``${VAR:-default}`` from ``env`` (the process environment), then from
    ``environment`` (the file's keys), else the default; else ``NamingException``."""
    source = os.environ if env is None else env

    def one(m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        if name in source:
            return source[name]
        if name in environment:
            return str(environment[name])
        if default is not None:
            return default
        raise NamingException(f"cannot resolve ${{{name}}}: not in the environment nor the file, "
                              "and no ${VAR:-default}")

    return _VAR.sub(one, value)


def read_properties(text: str) -> dict[str, str]:
    """A Java ``.properties`` file: ``key=value``, ``key: value`` or ``key value``; ``#`` and ``!``
    comments; a trailing backslash continues a line; ``\\t \\n \\r \\f \\uXXXX`` and escaped
    separators."""
    out: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].lstrip()
        i += 1
        if not line or line[0] in "#!":
            continue
        while _continues(line) and i < len(lines):
            line = line[:-1] + lines[i].lstrip()
            i += 1
        if _continues(line):
            line = line[:-1]
        key, value = _split(line)
        out[_unescape(key)] = _unescape(value)
    return out


def _continues(line: str) -> bool:
    n = len(line) - len(line.rstrip("\\"))
    return n % 2 == 1


def _split(line: str) -> tuple[str, str]:
    j = 0
    while j < len(line):
        c = line[j]
        if c == "\\":
            j += 2
            continue
        if c in "=: \t\f":
            break
        j += 1
    key, rest = line[:j], line[j:].lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return key, rest


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(s: str) -> str:
    if "\\" not in s:
        return s
    out: list[str] = []
    j = 0
    while j < len(s):
        c = s[j]
        if c == "\\" and j + 1 < len(s):
            n = s[j + 1]
            if n == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", s[j + 2:j + 6]):
                out.append(chr(int(s[j + 2:j + 6], 16)))
                j += 6
                continue
            out.append(_ESCAPES.get(n, n))
            j += 2
            continue
        out.append(c)
        j += 1
    return "".join(out)


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in data.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flatten(v, key + "."))
        elif isinstance(v, bool):
            out[key] = "true" if v else "false"
        else:
            out[key] = str(v)
    return out


def _load(source: str | Path) -> dict[str, str]:
    path = Path(source)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise NamingException(f"cannot read {path}: {e.strerror or e}") from e
    if path.suffix.lower() == ".toml":
        import tomllib

        try:
            return _flatten(tomllib.loads(raw.decode("utf-8")))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise NamingException(f"{path} is not valid TOML: {e}") from e
    return read_properties(raw.decode("latin-1" if b"\\u" in raw else "utf-8", errors="replace"))


def _option(name: str) -> str:
    """A ``JmsConnectionFactory`` bean property as this client's option name."""
    if name in ("username", "password"):
        return name
    if name.startswith(("jms.", "amqp.", "transport.", "failover.", "sasl.")):
        return name
    return "jms." + name


class InitialContext:
    """The bindings of a ``jndi.properties`` / TOML file (or a mapping of the same keys).
    ``environment`` adds or overrides keys (the ``Hashtable`` given to ``new InitialContext``);
    a ``java.naming.provider.url`` key names a further file to read, as in Qpid JMS."""

    def __init__(self, source: str | Path | Mapping[str, Any] | None = None,
                 environment: Mapping[str, Any] | None = None) -> None:
        env: dict[str, str] = {}
        if isinstance(source, Mapping):
            env.update(_flatten(source))
        elif source is not None:
            env.update(_load(source))
        env.update(_flatten(environment or {}))
        location = env.get("java.naming.provider.url")
        if location:
            extra = _load(location[len("file:"):] if location.startswith("file:") else location)
            env = {**extra, **env}
        self.environment = env
        self._bindings: dict[str, Any] = {}
        self._bind(env)

    def _bind(self, env: dict[str, str]) -> None:
        lower = {k.lower(): k for k in env}
        factories = {k[len(_FACTORY):]: env[k] for lk, k in lower.items() if lk.startswith(_FACTORY)}
        if not factories:
            factories = dict.fromkeys(DEFAULT_FACTORY_NAMES, "")
        defaults = {k[len(_DEFAULT):]: env[k] for lk, k in lower.items() if lk.startswith(_DEFAULT)}
        for name, url in factories.items():
            props = dict(defaults)
            if url.strip():
                props["remoteURI"] = url
            suffix = name + "."
            for lk, k in lower.items():
                if lk.startswith(_PROPERTY) and k[len(_PROPERTY):].startswith(suffix):
                    props[k[len(_PROPERTY) + len(suffix):]] = env[k]
            self._bindings[name] = ("factory", props)
        for k, v in env.items():
            if k.startswith("queue."):
                self._bindings[k[len("queue."):]] = ("queue", v)
            elif k.startswith("topic."):
                self._bindings[k[len("topic."):]] = ("topic", v)

    def names(self) -> list[str]:
        """Every bound name (``dynamicQueues/...`` and ``dynamicTopics/...`` are not listed)."""
        return sorted(self._bindings)

    def lookup(self, name: str) -> Any:
        """A ``ConnectionFactory``, ``Queue`` or ``Topic``; ``NamingException`` names an unbound name."""
        if name.startswith("dynamicQueues/"):
            return Queue(name[len("dynamicQueues/"):])
        if name.startswith("dynamicTopics/"):
            return Topic(name[len("dynamicTopics/"):])
        try:
            kind, value = self._bindings[name]
        except KeyError:
            bound = ", ".join(self.names()) or "nothing"
            raise NamingException(f"{name!r} is not bound (bound: {bound})") from None
        if kind == "queue":
            return Queue(expand(value, self.environment))
        if kind == "topic":
            return Topic(expand(value, self.environment))
        return self._factory(name, value)

    def lookup_destination(self, name: str) -> Destination:
        """``lookup`` that must find a destination."""
        found = self.lookup(name)
        if not isinstance(found, Destination):
            raise NamingException(f"{name!r} is a connection factory, not a destination")
        return found

    def _factory(self, name: str, props: dict[str, str]) -> Any:
        from .client.factory import ConnectionFactory

        values = {k: expand(v, self.environment) for k, v in props.items()}
        url = values.pop("remoteURI", DEFAULT_URL)
        options = {_option(k): v for k, v in values.items()}
        try:
            return ConnectionFactory(url, **options)
        except JMSException as e:
            raise NamingException(f"connection factory {name!r}: {e.reason}", None, e) from e
