"""What a shell script relies on from ``amqp-jms``: exit codes, JSON errors, ``--expect``, typed
``--property`` suffixes, and commands that check their extras before doing any work.

Each runs the real console entry point in a child process (the exit code is the process's own)
against the embedded broker of the test process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from amqp_jms import ConnectionFactory, Queue, Session, TextMessage

SRC = Path(__file__).resolve().parents[2] / "src"


def _cli(*argv: str, prelude: str = "", timeout: float = 60, stdin: str | None = None
         ) -> subprocess.CompletedProcess[str]:
    """``amqp-jms ARGV`` in a child interpreter; ``prelude`` runs first (to hide a module)."""
    code = prelude + "\nimport sys\nfrom amqp_jms.cli.main import main\nsys.exit(main(sys.argv[1:]))\n"
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=timeout, env=env,
        input=stdin,
    )


def _json_error(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr  # one object, no usage text, no traceback
    record = json.loads(lines[0])
    assert isinstance(record, dict)
    return record


def _drain(url: str, queue: str) -> list[str]:
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        consumer = conn.create_session(False, Session.AUTO_ACKNOWLEDGE).create_consumer(Queue(queue))
        bodies: list[str] = []
        while (body := consumer.receive_body(str, 500)) is not None:
            bodies.append(body)
        return bodies


def test_json_errors_are_one_object_on_stderr_with_the_exit_code_unchanged(broker: Any) -> None:
    # a JMS error (exit 1): a misspelled URL option, with the valid name suggested
    jms = _cli("receive", "q", "--url", broker.url + "?jms.prefechPolicy.all=1", "--json")
    assert jms.returncode == 1 and jms.stdout == ""
    record = _json_error(jms)
    assert record["error"] == "JMSException" and record["exit_code"] == 1
    assert "did you mean 'jms.prefetchPolicy.all'?" in record["message"]
    assert "docs/" not in record["message"]  # no repository path: a pip user has none
    # argparse's own usage error (exit 2), --json before or after the command
    bad_priority = ["send", "q", "x", "--priority", "12"]
    for argv in ([*bad_priority, "--json"], ["--json", *bad_priority]):
        usage = _cli(*argv)
        assert usage.returncode == 2 and usage.stdout == ""
        record = _json_error(usage)
        assert (record["error"], record["exit_code"]) == ("UsageError", 2)
        assert record["message"].startswith("argument --priority: invalid choice: 12")
    # without --json the same error stays text for people
    plain = _cli("send", "q", "x", "--priority", "12")
    assert plain.returncode == 2 and plain.stderr.startswith("usage: amqp-jms send")


def test_a_broker_that_cannot_start_reports_json_too(tmp_path: Path) -> None:
    """``amqp-jms broker`` runs the broker package's own command line; its start-up refusals
    (a configuration mistake, an empty password to hash) follow the same contract: exit 2, one
    JSON object on stderr under ``--json``, the file, line and key either way."""
    bad = tmp_path / "bad.toml"
    bad.write_text('[listener]\nport = 0\n\n[users.eve]\npassword = "plaintext"\n')
    proc = _cli("broker", "--config", str(bad), "--json")
    assert proc.returncode == 2 and "listening" not in proc.stdout
    record = _json_error(proc)
    assert (record["error"], record["exit_code"]) == ("UsageError", 2)
    assert record["message"].startswith(f"{bad}:5: [users.eve] password: plain-text password refused")
    plain = _cli("broker", "--config", str(bad))
    assert plain.returncode == 2 and f"{bad}:5: [users.eve] password" in plain.stderr
    assert not plain.stderr.lstrip().startswith("{")
    empty = _cli("--json", "broker", "--hash-password", stdin="\n")
    assert empty.returncode == 2 and _json_error(empty)["message"] == "empty password refused"


def test_an_unknown_property_type_suffix_is_a_usage_error_and_sends_nothing(broker: Any) -> None:
    bad = _cli("send", "typed", "x", "--url", broker.url, "--property", "n=5:foo")
    assert bad.returncode == 2
    assert "unknown type 'foo'" in bad.stderr and "':string'" in bad.stderr
    assert _drain(broker.url, "typed") == []
    # a colon in a string value: no word after it, or an explicit :string, keeps it
    ok = _cli("send", "typed", "x", "--url", broker.url, "--property", "at=12:30",
              "--property", "greeting=hello:world:string", "--json")
    assert ok.returncode == 0, ok.stderr
    with ConnectionFactory(broker.url).create_connection() as conn:
        conn.start()
        session = conn.create_session(False, Session.AUTO_ACKNOWLEDGE)
        msg = session.create_consumer(Queue("typed")).receive(5000)
        assert isinstance(msg, TextMessage)
        props = (msg.get_string_property("at"), msg.get_string_property("greeting"))
        assert props == ("12:30", "hello:world")


def test_receive_expect_tells_an_empty_queue_from_success(broker: Any) -> None:
    empty = _cli("receive", "expected", "--url", broker.url, "--expect", "1", "--timeout", "0.5")
    assert empty.returncode == 3, empty.stderr
    assert "expected 1 message from queue://expected, received 0" in empty.stderr
    as_json = _cli("receive", "expected", "--url", broker.url, "--expect", "1", "--timeout", "0.5", "--json")
    assert as_json.returncode == 3 and as_json.stdout == ""
    assert _json_error(as_json)["error"] == "ExpectationUnmet"
    # without --expect an empty queue is still success (documented)
    assert _cli("receive", "expected", "--url", broker.url, "--timeout", "0.5").returncode == 0

    assert _cli("send", "expected", "a", "b", "--url", broker.url).returncode == 0
    short = _cli("receive", "expected", "--url", broker.url, "--expect", "3", "--timeout", "0.5")
    assert short.returncode == 3 and short.stdout.splitlines() == ["a", "b"]
    assert "received 2" in short.stderr
    assert _cli("send", "expected", "c", "d", "--url", broker.url).returncode == 0
    enough = _cli("receive", "expected", "--url", broker.url, "--expect", "1", "--timeout", "5")
    assert enough.returncode == 0 and enough.stdout.splitlines() == ["c"]  # stops at N without --count
    assert _cli("receive", "expected", "--url", broker.url, "--expect", "2", "--count", "1").returncode == 2


HIDE = textwrap.dedent(
    """
    import sys

    class _Missing:
        '''A meta-path finder that makes the named top-level modules missing, as without the extra.'''

        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in {hidden!r}:
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
            return None

    sys.meta_path.insert(0, _Missing())
    """
)


def test_demo_without_the_spark_extra_says_which_extra_before_doing_anything(tmp_path: Path) -> None:
    data = tmp_path / "demo-data"
    proc = _cli("demo", "--messages", "10", "--data-dir", str(data), prelude=HIDE.format(hidden={"pyspark"}))
    assert proc.returncode == 2, proc.stderr
    assert "pip install 'amqp-jms[spark,demo]'" in proc.stderr and "missing: pyspark" in proc.stderr
    assert not data.exists()  # no broker started, no MQ dump written, no orders produced
    no_chart = _cli("demo", "--data-dir", str(data), "--json", prelude=HIDE.format(hidden={"matplotlib"}))
    assert no_chart.returncode == 2
    assert "missing: matplotlib" in _json_error(no_chart)["message"]
    assert not data.exists()


NO_JAVA = "import os\nos.environ['PATH'] = '/nonexistent'\nos.environ.pop('JAVA_HOME', None)\n"


def test_spark_commands_check_java_and_their_extra_before_any_work(tmp_path: Path) -> None:
    data = tmp_path / "demo-data"
    no_java = _cli("demo", "--messages", "10", "--data-dir", str(data), "--json", prelude=NO_JAVA)
    assert no_java.returncode == 2, no_java.stderr
    assert "needs Java 17 or later" in _json_error(no_java)["message"]
    assert not data.exists()
    out = tmp_path / "parquet"
    pipeline = _cli("pipeline", "orders", "--output", str(out), "--url", "amqp://127.0.0.1:1",
                    prelude=HIDE.format(hidden={"pyarrow"}))
    assert pipeline.returncode == 2, pipeline.stderr
    assert "needs the spark extra (missing: pyarrow): pip install 'amqp-jms[spark]'" in pipeline.stderr
    assert not out.exists()
