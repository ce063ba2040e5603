"""URL and option parsing: Qpid JMS names into frozen config objects, bad input refused."""

from __future__ import annotations

import dataclasses

import pytest

from amqp_jms import JMSException
from amqp_jms.provider.config import OPTION_NAMES, ConnectionConfig, parse_url


def test_defaults_match_qpid_jms() -> None:
    c = parse_url("amqp://localhost")
    assert (c.host, c.port, c.secure) == ("localhost", 5672, False)
    assert c.prefetch.queue_prefetch == c.prefetch.topic_prefetch == 1000
    assert c.redelivery.max_redeliveries == -1
    assert c.send_timeout_ms == -1 and c.connect_timeout_ms == 15000
    assert c.idle_timeout_ms == 60000 and c.drain_timeout_ms == 60000
    assert c.client_id is None and c.local_message_expiry is True


def test_user_password_host_port_and_amqps_default_port() -> None:
    c = parse_url("amqp://bob:s%40cret@example.org:5673")
    assert (c.username, c.password, c.host, c.port) == ("bob", "s@cret", "example.org", 5673)
    assert parse_url("amqps://h").port == 5671
    assert parse_url("amqps://h").secure



def test_websocket_schemes_default_to_the_http_ports_and_keep_the_path() -> None:
    wss = parse_url("amqpwss://ns.example/$servicebus/websocket?transport.ws.httpHeader.X-Tenant=blue")
    assert (wss.scheme, wss.port, wss.path, wss.secure) == ("amqpwss", 443, "/$servicebus/websocket", True)
    assert wss.transport.ws_http_headers == (("X-Tenant", "blue"),)
    ws = parse_url("amqpws://h/amqp?transport.ws.maxFrameSize=4096")
    assert (ws.port, ws.path, ws.secure, ws.transport.ws_max_frame_size) == (80, "/amqp", False, 4096)

def test_every_documented_option_parses() -> None:
    url = (
        "amqp://h:1?jms.clientID=c1&jms.username=u&jms.password=p&jms.prefetchPolicy.all=7"
        "&jms.presettlePolicy.presettleProducers=true&jms.redeliveryPolicy.maxRedeliveries=3"
        "&jms.redeliveryPolicy.outcome=REJECTED&jms.forceAsyncSend=true&jms.sendTimeout=100"
        "&jms.requestTimeout=200&jms.connectTimeout=300&jms.closeTimeout=400"
        "&jms.validatePropertyNames=false&jms.localMessageExpiry=false&amqp.idleTimeout=500"
        "&amqp.saslMechanisms=PLAIN,ANONYMOUS&amqp.maxFrameSize=65536&amqp.vhost=vh"
        "&amqp.drainTimeout=600&transport.trustStoreLocation=/ca.pem&transport.verifyHost=false"
    )
    c = parse_url(url)
    assert c.client_id == "c1" and (c.username, c.password) == ("u", "p")
    assert dataclasses.astuple(c.prefetch) == (7, 7, 7, 7)
    assert c.presettle.producer(is_topic=False, transacted=False)
    assert not c.presettle.consumer(is_topic=True)
    assert (c.redelivery.max_redeliveries, c.redelivery.outcome) == (3, "REJECTED")
    assert c.force_async_send and c.send_timeout_ms == 100 and c.request_timeout_ms == 200
    assert (c.connect_timeout_ms, c.close_timeout_ms) == (300, 400)
    assert not c.validate_property_names and not c.local_message_expiry
    assert c.idle_timeout_ms == 500 and c.sasl_mechanisms == ("PLAIN", "ANONYMOUS")
    assert c.max_frame_size == 65536 and c.vhost == "vh" and c.drain_timeout_ms == 600
    assert c.transport.trust_store_location == "/ca.pem" and not c.transport.verify_host


def test_specific_prefetch_overrides_and_keywords_win_over_url() -> None:
    c = parse_url("amqp://h?jms.prefetchPolicy.all=5&jms.prefetchPolicy.topicPrefetch=9", client_id="k")
    assert c.prefetch.queue_prefetch == 5 and c.prefetch.topic_prefetch == 9
    assert c.client_id == "k"
    assert parse_url("amqp://h?jms.clientID=a", **{"jms.clientID": "b"}).client_id == "b"


@pytest.mark.parametrize(
    "url, needle",
    [
        ("amqp://h?jms.prefetchPolicy.al=1", "jms.prefetchPolicy.al"),
        ("amqp://h?jms.forceAsyncSend=maybe", "jms.forceAsyncSend"),
        ("amqp://h?jms.sendTimeout=soon", "jms.sendTimeout"),
        ("amqp://h?jms.prefetchPolicy.all=-1", "must not be negative"),
        ("amqp://h?jms.redeliveryPolicy.outcome=LOST", "jms.redeliveryPolicy.outcome"),
        ("http://h", "unsupported URL scheme"),
        ("amqp://h:notaport", "invalid port"),
        ("amqp://h/path", "must not have a path"),
    ],
)
def test_bad_options_raise_naming_the_problem(url: str, needle: str) -> None:
    with pytest.raises(JMSException, match=needle.replace(".", r"\.")):
        parse_url(url)


def test_config_is_frozen_and_seconds_conversion() -> None:
    c = parse_url("amqp://h")
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.host = "x"  # type: ignore[misc]
    assert ConnectionConfig.seconds(-1) is None and ConnectionConfig.seconds(1500) == 1.5


def test_option_names_are_all_documented() -> None:
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "client.md").read_text()
    missing = [n for n in OPTION_NAMES if f"`{n}`" not in doc]
    assert not missing, f"options missing from docs/client.md: {missing}"


def test_future_type_by_name_and_qpid_jms_default_by_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    from amqp_jms.provider import config

    spins = {t: parse_url(f"amqp://h?provider.futureType={t.upper()}").answer_spin_seconds
             for t in ("conservative", "balanced", "progressive")}
    assert spins["conservative"] == 0.0 < spins["balanced"] < spins["progressive"] <= 0.001
    monkeypatch.setattr(config.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert config.default_future_type() == "conservative"
    assert parse_url("amqp://h").answer_spin_seconds == 0.0  # two CPUs: Qpid JMS sleeps too
    monkeypatch.setattr(config.os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    monkeypatch.setattr(config.sys, "platform", "linux")
    assert config.default_future_type() == "progressive"
    monkeypatch.setattr(config.sys, "platform", "win32")
    assert config.default_future_type() == "balanced"


def test_an_unknown_future_type_is_refused_naming_the_option() -> None:
    expected = r"provider\.futureType='spinning'.*conservative, balanced, progressive"
    with pytest.raises(JMSException, match=expected):
        parse_url("amqp://h?provider.futureType=spinning")
