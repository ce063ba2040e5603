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
        "import sys, amqp_jms, amqp_jms.broker, amqp_jms.broker.connection\n"
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
    import ast
    from pathlib import Path

    pkg = Path(SRC).resolve() / "amqp_jms"
    found = []
    for path in pkg.rglob("*.py"):
        rel = path.relative_to(pkg)
        if rel.parts[0] == "cli":
            continue
        depth = len(rel.parts) - 1  # how many dots reach the top package from this module
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom):
                mod = node.module or ""
                if node.level:
                    base = list(rel.parts[:-1])[: max(0, depth - (node.level - 1))]
                    mod = ".".join(["amqp_jms", *base, *([mod] if mod else [])])
                names = [mod] + [f"{mod}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            if any(n == "amqp_jms.cli" or n.startswith("amqp_jms.cli.") for n in names):
                found.append(f"{rel}:{node.lineno}")
    assert found == [], f"modules outside cli/ import it: {found}"


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
