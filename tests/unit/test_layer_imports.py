"""Importing one layer loads only what that layer needs.

Each check runs in a fresh interpreter (``sys.modules`` of the test process already holds
everything). The broker must not pull in the client through the top package's ``__version__``,
and the pure JMS mapping must import on a machine without python-qpid-proton (the proton bridge
is an explicit import of its own).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

SRC = os.path.join(os.path.dirname(__file__), "..", "..", "src")

BLOCK_PROTON = textwrap.dedent(
    """
    import sys

    class _NoProton:
        '''A meta-path finder that makes proton (and its C module) missing, as on a bare host.'''

        def find_spec(self, name, path=None, target=None):
            if name == "proton" or name.startswith("proton.") or name.startswith("cproton"):
                raise ImportError(f"blocked: {name}")
            return None

    sys.meta_path.insert(0, _NoProton())
    """
)


def _run(code: str) -> str:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.abspath(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_importing_the_broker_does_not_load_the_client() -> None:
    out = _run(
        "import sys, amqp_jms, amqp_jms.broker, amqp_jms.broker.protocol.connection\n"
        "assert 'Connection' in dir(amqp_jms)  # listed before it is loaded\n"
        "faces = ('amqp_jms.client', 'amqp_jms.provider', 'amqp_jms.aio')\n"
        "print(sorted(m for m in sys.modules if m.startswith(faces)))"
    )
    assert out.strip() == "[]"


def test_the_top_package_still_offers_the_client_classes() -> None:
    out = _run(
        "import amqp_jms, amqp_jms.client\n"
        "from amqp_jms import Connection, ConnectionFactory, __version__\n"
        "assert Connection is amqp_jms.client.Connection\n"
        "assert ConnectionFactory is amqp_jms.client.ConnectionFactory\n"
        "from amqp_jms._version import __version__ as leaf\n"
        "assert __version__ == leaf\n"
        "ns = {}\n"
        "exec('from amqp_jms import *', ns)\n"
        "assert set(amqp_jms.__all__) <= set(ns)\n"
        "print(__version__)"
    )
    assert out.strip().count(".") == 2


def test_the_mapping_imports_without_proton() -> None:
    out = _run(
        BLOCK_PROTON
        + textwrap.dedent(
            """
            from amqp_jms.message import TextMessage
            from amqp_jms.mapping import decode, encode, decode_sections
            m = TextMessage("hello")
            m.set_string_property("k", "v")
            back = decode(encode(m))
            assert back.get_text() == "hello" and back.get_string_property("k") == "v"
            assert decode_sections(encode(m)).application_properties == {"k": "v"}
            assert not [n for n in sys.modules if n == "proton" or n.startswith(("proton.", "cproton"))]
            try:
                import amqp_jms.mapping.proton_bridge  # noqa: F401
            except ImportError:
                print("bridge needs proton")
            """
        )
    )
    assert out.strip() == "bridge needs proton"


def test_nothing_imports_the_command_line() -> None:
    """``cli`` sits on top (docs/architecture.md): a library module that imported it would load
    the command line's parsers and tie a layer to a front end. Read from the source, every
    import form."""
    from pathlib import Path

    from import_graph import imports_in

    pkg = Path(SRC).resolve() / "amqp_jms"
    found = [f"{rel}:{line}" for rel, line, names in imports_in(pkg)
             if rel.parts[0] != "cli" and any(n == "amqp_jms.cli" or n.startswith("amqp_jms.cli.")
                                                 for n in names)]
    assert found == [], f"modules outside cli/ import it: {found}"


#: the broker's rooms, top to bottom (docs/architecture.md, "The broker"): a module may import its
#: own room and any room below it, never one above. The floor (``limits``, ``errors``) is what
#: every room reads; the package's face (``__init__``, ``__main__``) sits above them all.
BROKER_LAYERS = ("operations", "protocol", "routing", "storage")
BROKER_FLOOR = ("limits", "errors")


def _broker_room(module: str) -> int | None:
    """The rank of a module of ``amqp_jms.broker`` (higher = nearer the top), None outside it."""
    parts = module.split(".")
    if parts[:2] != ["amqp_jms", "broker"]:
        return None
    if len(parts) == 2 or parts[2] in ("__init__", "__main__"):
        return len(BROKER_LAYERS) + 1
    if parts[2] in BROKER_FLOOR:
        return 0
    if parts[2] in BROKER_LAYERS:
        return len(BROKER_LAYERS) - BROKER_LAYERS.index(parts[2])
    raise AssertionError(f"{module} is in no room of the broker: add it to one (BROKER_LAYERS)")


def broker_imports_against_the_flow(graph: dict[str, set[str]]) -> list[str]:
    """Each ``importer -> imported`` edge of ``graph`` that goes up a room, as text."""
    bad = []
    for importer, targets in sorted(graph.items()):
        low = _broker_room(importer)
        if low is None:
            continue
        for target in sorted(targets):
            high = _broker_room(target)
            if high is not None and high > low:
                bad.append(f"{importer} -> {target}")
    return bad


def _broker_import_graph() -> dict[str, set[str]]:
    """Every import of every module under broker/, read from the source: top-level, inside a
    function and under ``TYPE_CHECKING`` alike (a type-only import up a room is still a module
    that knows of the one above it)."""
    import ast
    from pathlib import Path

    top = Path(SRC).resolve()
    graph: dict[str, set[str]] = {}
    for path in (top / "amqp_jms" / "broker").rglob("*.py"):
        rel = path.relative_to(top).with_suffix("")
        package = list(rel.parts[:-1])
        module = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join([*package[: len(package) - (node.level - 1)], *([base] if base else [])])
                found.add(base)
                found.update(f"{base}.{a.name}" for a in node.names)  # ``from . import queue``
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
        graph[module] = found
    return graph


def test_broker_imports_run_one_way() -> None:
    """operations -> protocol -> routing -> storage -> floor: a lower room never imports a higher."""
    graph = _broker_import_graph()
    assert "amqp_jms.broker.routing.core" in graph and len(graph) > 40
    assert broker_imports_against_the_flow(graph) == []


def test_the_broker_flow_check_can_fail() -> None:
    """The checker itself, on a made-up graph: an edge up a room is named, down or across is not."""
    graph = {
        "amqp_jms.broker.storage.store": {"amqp_jms.broker.limits", "amqp_jms.broker.routing.queue"},
        "amqp_jms.broker.routing.core": {"amqp_jms.broker.storage.store", "amqp_jms.broker.routing.nodes"},
        "amqp_jms.broker.protocol.attach": {"amqp_jms.broker.operations.management", "amqp_jms.engine"},
        "amqp_jms.broker.limits": {"amqp_jms.broker.protocol"},
        "amqp_jms.broker.operations.cli": {"amqp_jms.broker", "amqp_jms.broker.protocol.server"},
    }
    assert broker_imports_against_the_flow(graph) == [
        "amqp_jms.broker.limits -> amqp_jms.broker.protocol",
        "amqp_jms.broker.operations.cli -> amqp_jms.broker",
        "amqp_jms.broker.protocol.attach -> amqp_jms.broker.operations.management",
        "amqp_jms.broker.storage.store -> amqp_jms.broker.routing.queue",
    ]


def test_the_container_and_jndi_sit_on_top_of_the_client() -> None:
    """``container/`` and ``jndi.py`` use the client (and aio); nothing of the client, aio,
    provider or broker imports them back (docs/architecture.md)."""
    out = _run(
        "import sys, amqp_jms.client, amqp_jms.aio, amqp_jms.broker\n"
        "print(sorted(m for m in sys.modules if m.startswith(('amqp_jms.container', 'amqp_jms.jndi'))))"
    )
    assert out.strip() == "[]"
    out = _run("import sys, amqp_jms.container, amqp_jms.jndi\nprint('amqp_jms.spark' in sys.modules)")
    assert out.strip() == "False"
