"""Claims-based security from the client (``cbs_token_provider``): put-token to ``$cbs`` before
each link and again before the token expires, against rhea checking SAS tokens on node's crypto
(an implementation of the SAS rule that shares nothing with ``amqp_jms.cbs``)."""

from __future__ import annotations

import time
import types

import pytest

from amqp_jms import ConnectionFactory
from amqp_jms.cbs import SAS_TOKEN, SasTokenProvider
from amqp_jms.exceptions import JMSSecurityException

pytestmark = pytest.mark.rhea


def test_the_token_is_renewed_before_expiry_while_messages_flow(rhea: types.ModuleType) -> None:
    with rhea.start("cbs_server.js", {"key_name": "RootManageSharedAccessKey", "key": "c2VjcmV0"}) as server:
        port = server.ready()["port"]
        tokens = SasTokenProvider("RootManageSharedAccessKey", "c2VjcmV0", ttl_s=2.0)
        with ConnectionFactory(f"amqp://127.0.0.1:{port}?amqp.saslLayer=false",
                               cbs_token_provider=tokens).create_connection() as conn:
            session = conn.create_session()
            producer = session.create_producer(session.create_queue("orders"))
            deadline = time.monotonic() + 4.5  # past two token lifetimes
            sent = 0
            while time.monotonic() < deadline:
                producer.send(session.create_text_message(f"m{sent}"))  # waits for the outcome
                sent += 1
                time.sleep(0.1)
        seen = server.result()
    puts = [p for p in seen["puts"] if p["audience"] == "sb://127.0.0.1/orders"]
    assert len(puts) >= 3 and all(p == {"audience": "sb://127.0.0.1/orders", "type": SAS_TOKEN,
                                        "status": 200} for p in puts)
    assert seen["accepted"] == sent and seen["rejected"] == 0


def test_a_refused_token_fails_the_link_naming_the_reason(rhea: types.ModuleType) -> None:
    with rhea.start("cbs_server.js", {"key_name": "RootManageSharedAccessKey", "key": "c2VjcmV0"}) as server:
        port = server.ready()["port"]
        wrong = SasTokenProvider("RootManageSharedAccessKey", "not-the-key")
        with ConnectionFactory(f"amqp://127.0.0.1:{port}?amqp.saslLayer=false",
                               cbs_token_provider=wrong).create_connection() as conn:
            session = conn.create_session()
            refused = r"\$cbs refused the token for sb://127\.0\.0\.1/orders: 401 bad signature"
            with pytest.raises(JMSSecurityException, match=refused):
                session.create_producer(session.create_queue("orders"))
        server.result()
