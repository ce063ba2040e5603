"""Peer quirks as capabilities (issue 17): judged once, from the peer's Open, in the provider;
the JMS layer only asks ``Capabilities`` and refuses with the reason it gives."""

from __future__ import annotations

import pytest

from amqp_jms import JMSException
from amqp_jms.provider.amqp.capabilities import capabilities_of, quirks_of
from amqp_jms.provider.base import (
    BROWSERS,
    DELAYED_DELIVERY,
    DURABLE_SUBSCRIPTIONS,
    SHARED_SUBSCRIPTIONS,
    UNSUBSCRIBE,
)

FULL = frozenset({"ANONYMOUS-RELAY", "DELAYED_DELIVERY", "SHARED-SUBS"})


def test_a_peer_offering_everything_supports_everything() -> None:
    caps = capabilities_of(FULL, {"product": "amqp-jms-broker"})
    assert caps.anonymous_relay and dict(caps.refusals) == {}
    for feature in (BROWSERS, DELAYED_DELIVERY, DURABLE_SUBSCRIPTIONS, SHARED_SUBSCRIPTIONS, UNSUBSCRIBE):
        caps.check(feature)  # does not raise
    assert caps.supports_browsers and caps.supports_delayed_delivery and caps.supports_shared_subscriptions


def test_missing_capability_symbols_are_refused_with_the_symbol_named() -> None:
    caps = capabilities_of(frozenset(), {})
    assert not caps.anonymous_relay  # the provider falls back to a link per destination
    with pytest.raises(JMSException, match="DELAYED_DELIVERY"):
        caps.check(DELAYED_DELIVERY)
    with pytest.raises(JMSException, match="SHARED-SUBS"):
        caps.check(SHARED_SUBSCRIPTIONS)
    assert caps.supports_browsers and caps.supports_durable_subscriptions and caps.supports_unsubscribe


def test_rabbitmq_limits_carry_their_measured_reasons() -> None:
    caps = capabilities_of(frozenset(), {"product": "RabbitMQ", "version": "3.10.8"})
    assert not (caps.supports_browsers or caps.supports_durable_subscriptions or caps.supports_unsubscribe)
    with pytest.raises(JMSException, match="support queue browsers: a drain request ends its session"):
        caps.check(BROWSERS)
    with pytest.raises(JMSException, match=r"RabbitMQ's AMQP 1\.0 plugin does not support unsubscribe"):
        caps.check(UNSUBSCRIBE)


@pytest.mark.parametrize("version, drain_unsafe", [("3.10.8", True), ("3.11.0", True), ("3.12.1", False),
                                                   ("", True)])
def test_rabbitmq_quirks_by_version(version: str, drain_unsafe: bool) -> None:
    q = quirks_of({"product": "RabbitMQ", "version": version})
    assert q.ignores_selectors and q.drain_unsafe is drain_unsafe
    assert not quirks_of({"product": "ActiveMQ Artemis"}).ignores_selectors
