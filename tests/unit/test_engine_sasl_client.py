"""The client's SASL mechanisms (engine/sasl_client.py): known-answer vectors, the choice Qpid
JMS makes among the server's offer, and what a misbehaving server gets."""

from __future__ import annotations

import pytest
from proton import UNDESCRIBED, Array, Data, Described, symbol, ubyte, ulong

from amqp_jms.engine.sasl_client import (
    SASL_HEADER,
    SaslClient,
    SaslCredentials,
    SaslError,
    SaslRefused,
    _ScramSha256,
    _ScramSha512,
    choose_mechanism,
    sasl_frame,
)

ALL = ["ANONYMOUS", "PLAIN", "EXTERNAL", "XOAUTH2", "CRAM-MD5",
       "SCRAM-SHA-1", "SCRAM-SHA-256", "SCRAM-SHA-512"]


@pytest.mark.parametrize(
    ("creds", "offered", "chosen"),
    [
        (SaslCredentials("u", "p"), ALL, "SCRAM-SHA-512"),
        (SaslCredentials("u", "p"), ["PLAIN", "SCRAM-SHA-256", "ANONYMOUS"], "SCRAM-SHA-256"),
        (SaslCredentials("u", "p", has_certificate=True), ["SCRAM-SHA-256", "EXTERNAL"], "EXTERNAL"),
        (SaslCredentials(has_certificate=True), ["PLAIN", "EXTERNAL", "ANONYMOUS"], "EXTERNAL"),
        (SaslCredentials(), ALL, "ANONYMOUS"),
        (SaslCredentials("u"), ["PLAIN"], None),  # a user name alone fits no password mechanism
        (SaslCredentials("u", "p", allowed=("PLAIN",)), ALL, "PLAIN"),  # amqp.saslMechanisms
        (SaslCredentials("u", "eyJ.a.b", allowed=("XOAUTH2",)), ALL, "XOAUTH2"),
        (SaslCredentials("u", "eyJ.a.b"), ["XOAUTH2", "PLAIN"], "PLAIN"),  # Qpid JMS: XOAUTH2 ranks lowest
        (SaslCredentials("u", "has space", allowed=("XOAUTH2",)), ALL, None),
        (SaslCredentials(allowed=("EXTERNAL",)), ALL, None),  # no certificate
    ],
)
def test_the_mechanism_is_chosen_as_qpid_jms_chooses(
    creds: SaslCredentials, offered: list[str], chosen: str | None
) -> None:
    assert choose_mechanism(offered, creds) == chosen


def test_scram_sha_256_matches_rfc_7677() -> None:
    m = _ScramSha256(SaslCredentials("user", "pencil"), nonce="rOprNGfwEbeRWgbNEkqO")
    assert m.initial() == b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
    final = m.challenge(b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                        b"s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
    assert final == (b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                     b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
    m.outcome_data(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
    m.verify()


def test_scram_sha_512_matches_the_known_answer_qpid_jms_tests_with() -> None:
    m = _ScramSha512(SaslCredentials("user", "pencil"), nonce="rOprNGfwEbeRWgbNEkqO")
    final = m.challenge(b"r=rOprNGfwEbeRWgbNEkqO02431b08-2f89-4bad-a4e6-80c0564ec865,"
                        b"s=Yin2FuHTt/M0kJWb0t9OI32n2VmOGi3m+JfjOvuDF88=,i=4096")
    assert final == (b"c=biws,r=rOprNGfwEbeRWgbNEkqO02431b08-2f89-4bad-a4e6-80c0564ec865,"
                     b"p=Hc5yec3NmCD7t+kFRw4/3yD6/F3SQHc7AVYschRja+Bc3sbdjlA0eH1OjJc0DD4ghn1tnXN5/Wr6qm9xmaHt4A==")
    with pytest.raises(SaslError, match="signature does not match"):
        m.challenge(b"v=" + b"A" * 88)  # a server that does not know the password


def frames(*items: tuple[int, list[object]]) -> bytes:
    return SASL_HEADER + b"".join(sasl_frame(p, f) for p, f in items)


def mechanisms(*names: str) -> tuple[int, list[object]]:
    return 0x40, [Array(UNDESCRIBED, Data.SYMBOL, *[symbol(n) for n in names])]  # type: ignore[arg-type]


def sent(client: SaslClient) -> list[object]:
    out = client.data_to_send()
    assert out.startswith(SASL_HEADER)
    out, got = out[8:], []
    while out:
        size = int.from_bytes(out[:4], "big")
        d = Data()
        d.decode(out[8:size])
        obj = d.get_object()  # binary fields are views into d: copied while it lives
        fields = [bytes(v) if isinstance(v, memoryview) else v for v in obj.value]
        got.append(Described(obj.descriptor, fields))
        out = out[size:]
    return got


def test_the_amqp_layer_starts_with_the_bytes_after_the_ok_outcome() -> None:
    client = SaslClient(SaslCredentials("alice", "pw", hostname="vhost"))
    rest = client.receive_data(frames(mechanisms("ANONYMOUS", "PLAIN"), (0x44, [ubyte(0)])) + b"AMQP\x00\x01")
    assert client.done and rest == b"AMQP\x00\x01"
    (init,) = sent(client)
    assert isinstance(init, Described) and init.descriptor == ulong(0x41)
    assert init.value == ["PLAIN", b"\x00alice\x00pw", "vhost"]


def test_a_refusal_carries_the_code_and_xoauth2s_error_json() -> None:
    client = SaslClient(SaslCredentials("alice", "tok", allowed=("XOAUTH2",)))
    with pytest.raises(SaslRefused) as refused:
        client.receive_data(frames(mechanisms("XOAUTH2"), (0x42, [b'{"status":"401"}']), (0x44, [ubyte(1)])))
    assert refused.value.code == 1 and refused.value.text == '{"status":"401"}'


@pytest.mark.parametrize(
    ("wire", "reason"),
    [
        (b"AMQP\x00\x01\x00\x00", "does not speak SASL"),
        (SASL_HEADER + (10**6).to_bytes(4, "big") + b"\x02\x01\x00\x00", "malformed SASL frame"),
        (frames((0x44, [ubyte(0)])), "unexpected SASL frame"),  # an outcome before any mechanism
        (frames(mechanisms("GSSAPI")), "no SASL mechanism fits: the server offers GSSAPI"),
        # SCRAM accepted without the server ever proving itself
        (frames(mechanisms("SCRAM-SHA-512")), None),
    ],
)
def test_a_misbehaving_server_gets_an_error_not_a_hang(wire: bytes, reason: str | None) -> None:
    client = SaslClient(SaslCredentials("u", "p"))
    if reason is None:
        client.receive_data(wire)
        nonce = client.mechanism.nonce  # type: ignore[union-attr]
        first = f"r={nonce}x,s=c2FsdA==,i=4096".encode()
        client.receive_data(sasl_frame(0x42, [first]))
        with pytest.raises(SaslError, match="without proving"):
            client.receive_data(sasl_frame(0x44, [ubyte(0)]))
        return
    with pytest.raises(SaslError, match=reason):
        client.receive_data(wire)
