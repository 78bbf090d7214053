"""SCRAM and PLAIN on the server side: RFC 7677's example exchange byte for byte,
kafka-python's SCRAM client (an independent implementation) against ours for both
mechanisms, and the failures: wrong password, unknown user, tampered or replayed proof."""

from __future__ import annotations

import base64
from functools import partial

import pytest
from kafka.net.sasl.scram import ScramClient

from rillet.broker.security.sasl.decoys import decoy_credential
from rillet.broker.security.sasl.plain import authenticate_plain
from rillet.broker.security.sasl.scram import (
    Lookup,
    SaslAuthenticationFailed,
    ScramCredential,
    ScramServer,
    make_credential,
)


def lookup_of(*credentials: tuple[str, ScramCredential]) -> Lookup:
    table = {(user, c.mechanism): c for user, c in credentials}
    return lambda user, mechanism: table.get((user, mechanism))


def test_rfc_7677_example_exchange() -> None:
    salt = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
    credential = make_credential("SCRAM-SHA-256", "pencil", 4096, salt)
    server = ScramServer(
        "SCRAM-SHA-256",
        lookup_of(("user", credential)),
        server_nonce=lambda: "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0",
    )
    first = server.first(b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO")
    assert first == (
        b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    )
    final = server.final(
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
        b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    )
    assert final == b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
    assert server.user == "user" and server.done


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_kafka_pythons_client_authenticates(mechanism: str) -> None:
    credential = make_credential(mechanism, "s3cret")
    server = ScramServer(mechanism, lookup_of(("alice", credential)))
    client = ScramClient("alice", "s3cret", mechanism)
    client.process_server_first_message(server.first(client.first_message()))
    client.process_server_final_message(server.final(client.final_message()))  # checks us
    assert server.user == "alice"


@pytest.mark.parametrize(
    ("user", "password"), [("alice", "wrong"), ("mallory", "s3cret")], ids=["password", "user"]
)
def test_wrong_credentials_fail(user: str, password: str) -> None:
    credential = make_credential("SCRAM-SHA-256", "s3cret")
    server = ScramServer("SCRAM-SHA-256", lookup_of(("alice", credential)))
    client = ScramClient(user, password, "SCRAM-SHA-256")
    with pytest.raises(SaslAuthenticationFailed, match="invalid user credentials"):
        client.process_server_first_message(server.first(client.first_message()))
        server.final(client.final_message())
    assert not server.done


def test_a_proof_is_bound_to_its_exchange() -> None:
    credential = make_credential("SCRAM-SHA-256", "s3cret")
    lookup = lookup_of(("alice", credential))
    first_server = ScramServer("SCRAM-SHA-256", lookup)
    client = ScramClient("alice", "s3cret", "SCRAM-SHA-256")
    client.process_server_first_message(first_server.first(client.first_message()))
    captured = client.final_message()
    replayed = ScramServer("SCRAM-SHA-256", lookup)
    replayed.first(client.first_message())
    with pytest.raises(SaslAuthenticationFailed):
        replayed.final(captured)  # another server nonce: the captured proof is worthless
    tampered = captured[:-6] + (b"AAAA==" if not captured.endswith(b"AAAA==") else b"BBBB==")
    with pytest.raises(SaslAuthenticationFailed):
        first_server.final(tampered)


@pytest.mark.parametrize(
    "message", [b"", b"garbage", b"n,,", b"p=tls-unique,,n=a,r=x", b"\xff\xfe", b"n" * 5000]
)
def test_malformed_first_messages_fail_cleanly(message: bytes) -> None:
    server = ScramServer("SCRAM-SHA-256", lambda u, m: None)
    with pytest.raises(SaslAuthenticationFailed):
        server.first(message)


def test_plain_checks_the_password_against_the_scram_credential() -> None:
    lookup = lookup_of(("bob", make_credential("SCRAM-SHA-512", "hunter22")))
    decoy = partial(decoy_credential, b"node key")
    assert authenticate_plain(b"\0bob\0hunter22", lookup, decoy) == "bob"
    assert authenticate_plain(b"bob\0bob\0hunter22", lookup, decoy) == "bob"
    for bad in (b"\0bob\0nope", b"\0eve\0hunter22", b"eve\0bob\0hunter22", b"no-separators"):
        with pytest.raises(SaslAuthenticationFailed):
            authenticate_plain(bad, lookup, decoy)
