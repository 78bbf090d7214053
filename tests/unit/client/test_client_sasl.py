"""The client side of SASL: RFC 7677's example exchange byte for byte, our client against our
server for both SCRAM mechanisms, and the refusals (a server that does not prove the
credential, a nonce it did not extend, too few iterations, bad logins)."""

from __future__ import annotations

import pytest

from rillet.broker.security.sasl.scram import ScramServer, make_credential
from rillet.client.errors import AuthenticationFailedError
from rillet.client.sasl import SaslLogin, ScramClient, plain_message

RFC_NONCE = "rOprNGfwEbeRWgbNEkqO"
RFC_SERVER_FIRST = (
    b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
)


def test_rfc_7677_example_exchange() -> None:
    client = ScramClient(SaslLogin("SCRAM-SHA-256", "user", "pencil"), nonce=RFC_NONCE)
    assert client.first() == b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
    assert client.final(RFC_SERVER_FIRST) == (
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
        b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    )
    client.verify(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
    with pytest.raises(AuthenticationFailedError):
        client.verify(b"v=AAAATRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_our_client_and_server_agree(mechanism: str) -> None:
    credential = make_credential(mechanism, "s3cret, with=signs", 4096)
    server = ScramServer(mechanism, lambda user, m: credential if user == "a,b=c" else None)
    client = ScramClient(SaslLogin(mechanism, "a,b=c", "s3cret, with=signs"))
    client.verify(server.final(client.final(server.first(client.first()))))
    assert server.user == "a,b=c" and server.done


@pytest.mark.parametrize(
    ("server_first", "why"),
    [
        (b"r=someone-elses,s=AAAA,i=4096", "nonce"),
        (b"r=" + RFC_NONCE.encode() + b",s=AAAA,i=4096", "nonce"),  # not extended
        (b"r=" + RFC_NONCE.encode() + b"x,s=AAAA,i=1000", "iterations"),
        (b"r=" + RFC_NONCE.encode() + b"x,s=!!,i=4096", "malformed"),
        (b"r=" + RFC_NONCE.encode() + b"x,s=AAAA,i=many", "malformed"),
        (b"\xff\xfe", "UTF-8"),
    ],
)
def test_a_doubtful_server_first_message_is_refused(server_first: bytes, why: str) -> None:
    client = ScramClient(SaslLogin("SCRAM-SHA-256", "user", "pencil"), nonce=RFC_NONCE)
    with pytest.raises(AuthenticationFailedError, match=why):
        client.final(server_first)


def test_a_server_error_is_reported_and_nothing_unproven_is_accepted() -> None:
    client = ScramClient(SaslLogin("SCRAM-SHA-256", "user", "pencil"), nonce=RFC_NONCE)
    with pytest.raises(AuthenticationFailedError, match="did not prove"):
        client.verify(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")  # before final()
    client.final(RFC_SERVER_FIRST)
    with pytest.raises(AuthenticationFailedError, match="invalid-proof"):
        client.verify(b"e=invalid-proof")


def test_logins_are_checked_and_plain_is_kafkas_message() -> None:
    assert plain_message(SaslLogin("PLAIN", "alice", "pw")) == b"\0alice\0pw"
    with pytest.raises(ValueError, match="mechanism"):
        SaslLogin("GSSAPI", "alice", "pw")
    with pytest.raises(ValueError, match="username"):
        SaslLogin("PLAIN", "", "pw")
    assert "pw" not in repr(SaslLogin("PLAIN", "alice", "pw"))
