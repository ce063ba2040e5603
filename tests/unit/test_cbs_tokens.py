"""The token providers of claims-based security (``amqp_jms.cbs``)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from types import SimpleNamespace
from urllib.parse import quote_plus

import pytest

from amqp_jms import ConnectionFactory
from amqp_jms.cbs import JWT, SAS_TOKEN, EntraIdTokenProvider, SasTokenProvider, parse_sas_token
from amqp_jms.exceptions import JMSException


def test_a_sas_token_is_service_bus_shared_access_signature() -> None:
    before = time.time()
    tok = SasTokenProvider("send-policy", "s3cret+key", ttl_s=600).get_token("sb://ns.example/orders")
    fields = parse_sas_token(tok.token)
    assert tok.type == SAS_TOKEN
    assert (fields["sr"], fields["skn"]) == ("sb://ns.example/orders", "send-policy")
    assert int(fields["se"]) == int(tok.expires_at) and before + 599 <= tok.expires_at <= time.time() + 601
    # the signature rule, written out independently: HMAC-SHA256(key, urlencode(sr) + "\n" + se)
    to_sign = f"{quote_plus('sb://ns.example/orders')}\n{fields['se']}".encode()
    expected = hmac.new(b"s3cret+key", to_sign, hashlib.sha256).digest()
    assert fields["sig"] == base64.b64encode(expected).decode()
    assert "s3cret" not in repr(SasTokenProvider("send-policy", "s3cret+key"))


def test_an_entra_id_credential_gives_jwt_tokens_for_the_service_bus_scope() -> None:
    asked: list[str] = []

    class Credential:
        def get_token(self, scope: str) -> SimpleNamespace:
            asked.append(scope)
            return SimpleNamespace(token="eyJ.x.y", expires_on=1_900_000_000)

    tok = EntraIdTokenProvider(Credential()).get_token("sb://ns.example/orders")
    assert (tok.token, tok.expires_at, tok.type) == ("eyJ.x.y", 1_900_000_000.0, JWT)
    assert asked == ["https://servicebus.azure.net/.default"]
    with pytest.raises(TypeError, match="get_token"):
        EntraIdTokenProvider(object())


def test_the_factory_refuses_something_that_is_not_a_token_provider() -> None:
    with pytest.raises(JMSException, match="cbs_token_provider: expected an object with get_token"):
        ConnectionFactory("amqp://h", cbs_token_provider="key")
    with pytest.raises(JMSException, match="token_provider: expected a callable"):
        ConnectionFactory("amqp://h", token_provider="token")
