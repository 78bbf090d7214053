"""The SCRAM primitives both sides share: RFC 7677's worked example, names and attributes."""

from __future__ import annotations

import base64

from rillet.wire.scram import (
    attributes,
    escape_name,
    keys_from_salted,
    salted_password,
    signature,
    unescape_name,
    xor,
)

# RFC 7677, section 3 (SCRAM-SHA-256, user "user", password "pencil"); the proof and
# signature are recomputed for the example's own messages (the RFC's printed ones are not
# consistent with them, a known erratum), as the client's and server's tests have them.
SALT = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
AUTH_MESSAGE = (
    b"n=user,r=rOprNGfwEbeRWgbNEkqO,"
    b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,"
    b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
)


def test_rfc_7677_proof_and_server_signature() -> None:
    keys = keys_from_salted("sha256", salted_password("sha256", "pencil", SALT, 4096))
    proof = xor(keys.client_key, signature(keys.stored_key, AUTH_MESSAGE, "sha256"))
    assert base64.b64encode(proof) == b"dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    server = signature(keys.server_key, AUTH_MESSAGE, "sha256")
    assert base64.b64encode(server) == b"6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
    # What the server checks: the proof gives back a ClientKey whose hash is StoredKey.
    assert xor(proof, signature(keys.stored_key, AUTH_MESSAGE, "sha256")) == keys.client_key


def test_names_with_separators_round_trip() -> None:
    for name in ("user", "a=b", "a,b", "=2C", "x=3D,y"):
        escaped = escape_name(name)
        assert "," not in escaped
        assert unescape_name(escaped) == name


def test_attributes_first_wins_and_odd_parts_skipped() -> None:
    assert attributes("r=abc,s=c2FsdA==,i=4096,r=other,xx=1,novalue") == {
        "r": "abc",
        "s": "c2FsdA==",
        "i": "4096",
    }
