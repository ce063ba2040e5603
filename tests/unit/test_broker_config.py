"""The broker configuration file: what it sets, and that every mistake names its line and key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from amqp_jms.broker.limits import AddressFullPolicy
from amqp_jms.broker.operations.config import BrokerConfig, ConfigError, load_config, with_overrides
from amqp_jms.broker.protocol.scram import hash_password, parse_password_hash, verify_password
from amqp_jms.broker.routing.authorization import Permission

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "broker.toml"
HASH = hash_password("pw", salt=b"0123456789abcdef")


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "broker.toml"
    p.write_text(text)
    return p


def test_password_hash_round_trip() -> None:
    creds = parse_password_hash(HASH)
    assert verify_password(creds, "pw") and not verify_password(creds, "pW")
    with pytest.raises(ValueError, match="malformed"):
        parse_password_hash("SCRAM-SHA-256$4096:abc")


def test_the_shipped_example_loads() -> None:
    cfg = load_config(EXAMPLE)
    assert cfg.port == 5672 and cfg.host == "0.0.0.0" and cfg.max_delivery_attempts == 5
    assert cfg.address_prefixes == ("queue://", "topic://")
    assert cfg.data_dir == str(EXAMPLE.parent / "broker-data")
    assert cfg.users is not None and cfg.users.check("alice", "alice-secret")
    assert not cfg.users.check("alice", "bob-secret") and not cfg.users.anonymous
    auth = cfg.authorization
    assert auth is not None
    assert auth.allows("alice", "orders.eu", Permission.SEND)
    assert not auth.allows("alice", "orders.eu", Permission.CONSUME)
    assert auth.allows("billing-service", "orders.eu", Permission.CONSUME)
    assert auth.allows("ops", "DLQ", Permission.CONSUME) and not auth.allows("bob", "DLQ", Permission.CONSUME)
    assert cfg.limits is not None and cfg.limits.max_message_size == 104857600


def test_the_example_without_limits_loads_anywhere(tmp_path: Path) -> None:
    text = EXAMPLE.read_text().split("[limits]")[0]
    cfg = load_config(write(tmp_path, text))
    assert cfg.limits is None
    assert cfg.users is not None and cfg.users.mechanisms == ["SCRAM-SHA-256", "PLAIN"]


def test_empty_file_is_the_default_broker(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, ""))
    assert cfg == BrokerConfig()


def line_of(message: str) -> int:
    m = re.search(r"broker\.toml:(\d+): ", message)
    assert m, message
    return int(m.group(1))


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("[listener]\nport = 5672\nprot = 1\n", 3, "[listener] prot: unknown key"),
        ("[listener]\n\nport = \"5672\"\n", 3, "[listener] port: expected an integer"),
        ("[listener]\nport = 70000\n", 2, "expected 0..65535"),
        ("[users.alice]\nroles = [\"a\"]\npassword = \"hunter2\"\n", 3,
         "[users.alice] password: plain-text password refused"),
        ("[users.alice]\npassword = \"SCRAM-SHA-256$1:x$y:z\"\n", 2, "malformed password hash"),
        ("[users.alice]\nroles = \"admin\"\n", 2, "roles: expected a list of strings"),
        ("[[permissions]]\nmatch = \"a\"\n[[permissions]]\nmatch = \"b\"\nwrite = [\"x\"]\n", 5,
         "[permissions[1]] write: unknown key"),
        ("[[permissions]]\nmatch = \"orders#\"\n", 2, "must stand alone"),
        ("[[permissions]]\nsend = [\"x\"]\n", 1, "needs match"),
        ("[tls]\ncert = \"nope.pem\"\nkey = \"nope.key\"\n", 2, "[tls] cert: no such file"),
        ("[dead_letter]\nmax_delivery_attempts = -1\n", 2, "expected a count >= 0"),
        ("[login]\nanonymous = \"yes\"\n", 2, "expected true or false"),
        ("address_prefixes = [\"queue://\"]\n", 1, "address_prefixes: expected"),
        ("colour = 1\n", 1, "colour: unknown key"),
        ("\n[[permissions]]\nmatch = \"#\"\nsend = [\"x\"]\n", 2, "permissions need users"),
    ],
)
def test_mistakes_name_the_line_and_key(tmp_path: Path, text: str, line: int, words: str) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(write(tmp_path, text))
    assert words in str(e.value)
    assert line_of(str(e.value)) == line


def test_toml_syntax_errors_give_the_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"not valid TOML: .*line 2"):
        load_config(write(tmp_path, "[listener]\nport = = 1\n"))


def test_plain_passwords_allowed_only_when_asked_and_warned(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    text = "[login]\nallow_plain_passwords = true\n[users.alice]\npassword = \"hunter2\"\n"
    cfg = load_config(write(tmp_path, text))
    assert cfg.users is not None and cfg.users.check("alice", "hunter2")
    assert "plain-text password" in caplog.text and "broker.toml:4" in caplog.text


def test_paths_are_relative_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "c.pem").write_text("x")
    (tmp_path / "k.pem").write_text("x")
    text = "[tls]\ncert = \"c.pem\"\nkey = \"k.pem\"\n[store]\ndata_dir = \"d\"\n"
    cfg = load_config(write(tmp_path, text))
    assert cfg.tls_cert == str(tmp_path / "c.pem") and cfg.data_dir == str(tmp_path / "d")


def test_flags_override_the_file(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, "[listener]\nport = 5673\nhost = \"0.0.0.0\"\n"))
    over = with_overrides(cfg, port=0, host=None, dlq=None)
    assert over.port == 0 and over.host == "0.0.0.0" and over.dlq == "DLQ"


def test_limits_table_is_read_by_the_limits_own_reader(tmp_path: Path) -> None:
    text = ('[limits]\nmax-message-size = 5000\nhandshake_timeout = 3\naddress_full_policy = "block"\n'
            'persist_delivery_count = false\nspill_dir = "/x"\n')
    got = load_config(write(tmp_path, text)).limits
    assert got is not None and got.max_message_size == 5000 and got.handshake_timeout == 3.0
    assert got.address_full_policy is AddressFullPolicy.BLOCK and not got.persist_delivery_count
    assert got.spill_dir == "/x"
    for line, words in [("max_mesage_size = 1", "unknown limit"), ("max_message_size = 1.5", "an integer"),
                        ("persist_delivery_count = 1", "true or false"),
                        ('address_full_policy = "DROP"', "PAGE, BLOCK"),
                        ("max_frame_size = 100", "at least 512")]:
        with pytest.raises(ConfigError, match=words) as info:
            load_config(write(tmp_path, f"[limits]\n{line}\n"))
        assert ":2: [limits]" in str(info.value)  # the line and table are named


def test_docs_show_the_shipped_example_verbatim() -> None:
    doc = (EXAMPLE.parents[1] / "docs" / "broker.md").read_text()
    block = doc.split("```toml\n", 1)[1].split("```", 1)[0]
    assert block == EXAMPLE.read_text()


def test_address_prefixes_reach_the_broker(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, 'address_prefixes = ["queue://", "topic://"]\n'))
    assert cfg.broker_options()["address_prefixes"] == ("queue://", "topic://")
