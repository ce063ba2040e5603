"""A URL option the client refuses says what to write instead: the nearest valid names, the page
that lists them (never a repository path), or, for Java-only TLS options, the PEM equivalent."""

from __future__ import annotations

import re

import pytest

from amqp_jms import JMSException
from amqp_jms._links import doc_url
from amqp_jms.provider.config import parse_url
from amqp_jms.provider.failover.uri import parse_failover_url


@pytest.mark.parametrize(
    ("option", "suggested"),
    [
        ("jms.prefechPolicy.all", "'jms.prefetchPolicy.all'?"),  # a typo
        ("jms.clientId", "'jms.clientID'?"),  # the wrong case
        ("jms.idleTimeout", "'amqp.idleTimeout'?"),  # the right leaf under the wrong prefix
        ("jms.prefetchPolicy.al", "one of 'jms.prefetchPolicy.all', "),
    ],
)
def test_an_unknown_option_names_the_nearest_valid_ones(option: str, suggested: str) -> None:
    with pytest.raises(JMSException) as e:
        parse_url(f"amqp://h?{option}=1")
    text = str(e.value)
    assert f"unknown connection option {option!r}; did you mean {suggested}" in text
    assert doc_url("client", "connection-url") in text and "docs/" not in text


def test_an_option_like_nothing_gets_only_the_page() -> None:
    with pytest.raises(JMSException, match=r"unknown connection option 'zzz' \(every option: https://"):
        parse_url("amqp://h?zzz=1")


def test_failover_options_are_suggested_from_their_own_names() -> None:
    with pytest.raises(JMSException, match=re.escape("did you mean 'failover.nested.amqp.idleTimeout'?")):
        parse_failover_url("failover:(amqp://a:1)?amqp.idleTimeout=5")
    with pytest.raises(JMSException, match=re.escape("one of 'failover.maxReconnectAttempts'")):
        parse_failover_url("failover:(amqp://a:1)?failover.maxReconectAttempts=5")


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("transport.trustStoreType=JKS", "PEM file of CA certificates"),
        ("transport.keyStoreType=PKCS12", "openssl pkcs12 -in client.p12 -out client.pem"),
        ("transport.trustStorePassword=changeit", "a PEM file of CA certificates has no password"),
        ("transport.keyAlias=client", "transport.keyLocation"),
    ],
)
def test_java_only_options_are_refused_with_the_pem_equivalent(query: str, says: str) -> None:
    with pytest.raises(JMSException) as e:
        parse_url(f"amqps://h?{query}")
    assert "is Java-only" in str(e.value) and says in str(e.value)


@pytest.mark.parametrize(
    ("option", "path", "says"),
    [
        ("transport.trustStoreLocation", "/etc/pki/truststore.jks", "keytool -exportcert -rfc"),
        ("transport.keyStoreLocation", "client.p12", "openssl pkcs12"),
        ("transport.keyStoreLocation", "client.PFX", "openssl pkcs12"),
    ],
)
def test_key_store_files_are_refused_before_connecting(option: str, path: str, says: str) -> None:
    with pytest.raises(JMSException, match="Python's TLS \\(OpenSSL\\) reads PEM files") as e:
        parse_url(f"amqps://h?{option}={path}")
    assert says in str(e.value)


def test_pem_files_are_taken_as_they_are() -> None:
    t = parse_url("amqps://h?transport.trustStoreLocation=ca.pem&transport.keyStoreLocation=client.crt").transport
    assert (t.trust_store_location, t.key_store_location) == ("ca.pem", "client.crt")
