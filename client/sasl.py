"""SASL for rillet's client: a login (mechanism, user, password) and the client side of the
exchange, sans-I/O.

PLAIN sends one message (``\\0user\\0password``: use it over TLS only); SCRAM (RFC 5802,
RFC 7677) sends two and checks the server's final signature, so the client also knows it
talked to a server that holds the user's credential. Nodes whose native listener sets
``sasl_mechanisms`` require a login before any other request.
"""

from __future__ import annotations

import base64
import hmac
import secrets
from dataclasses import dataclass, field

from rillet.client.errors import AuthenticationFailedError
from rillet.wire.scram import (
    MAX_ITERATIONS,
    MIN_ITERATIONS,
    SCRAM_DIGESTS,
    attributes,
    escape_name,
    keys_from_salted,
    salted_password,
    signature,
    xor,
)

MECHANISMS = (*SCRAM_DIGESTS, "PLAIN")


@dataclass(frozen=True, slots=True)
class SaslLogin:
    """Kafka's ``sasl.mechanism``, ``sasl.username`` and ``sasl.password``."""

    mechanism: str
    username: str
    password: str = field(repr=False)

    def __post_init__(self) -> None:
        if self.mechanism not in MECHANISMS:
            raise ValueError(f"SASL mechanism must be one of {', '.join(MECHANISMS)}")
        if not self.username:
            raise ValueError("SASL username is empty")


def plain_message(login: SaslLogin) -> bytes:
    return b"\0" + login.username.encode() + b"\0" + login.password.encode()


class ScramClient:
    """``first()`` -> the client's first message; ``final(server_first)`` -> its final
    message; ``verify(server_final)`` checks the server's signature (AuthenticationFailedError
    when anything is off)."""

    def __init__(self, login: SaslLogin, nonce: str | None = None) -> None:
        self._digest = SCRAM_DIGESTS[login.mechanism]
        self._login = login
        self._nonce = nonce or secrets.token_urlsafe(24)
        self._first_bare = f"n={escape_name(login.username)},r={self._nonce}"
        self._server_signature = b""

    def first(self) -> bytes:
        return ("n,," + self._first_bare).encode()

    def final(self, server_first: bytes) -> bytes:
        text = _text(server_first)
        fields = attributes(text)
        nonce, salt_b64, count = fields.get("r", ""), fields.get("s", ""), fields.get("i", "")
        if not nonce.startswith(self._nonce) or len(nonce) == len(self._nonce):
            raise AuthenticationFailedError("SCRAM: the server's nonce does not extend ours")
        try:
            salt = base64.b64decode(salt_b64, validate=True)
            iterations = int(count)
        except ValueError:
            raise AuthenticationFailedError("SCRAM: malformed server-first message") from None
        if not MIN_ITERATIONS <= iterations <= MAX_ITERATIONS:
            raise AuthenticationFailedError(f"SCRAM: {iterations} iterations refused")
        digest = self._digest
        keys = keys_from_salted(
            digest, salted_password(digest, self._login.password, salt, iterations)
        )
        without_proof = f"c=biws,r={nonce}"
        auth_message = f"{self._first_bare},{text},{without_proof}".encode()
        proof = xor(keys.client_key, signature(keys.stored_key, auth_message, digest))
        self._server_signature = signature(keys.server_key, auth_message, digest)
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def verify(self, server_final: bytes) -> None:
        fields = attributes(_text(server_final))
        if "e" in fields:
            raise AuthenticationFailedError(f"SCRAM: the server says {fields['e']}")
        try:
            signature = base64.b64decode(fields.get("v", ""), validate=True)
        except ValueError:
            signature = b""
        if not self._server_signature or not hmac.compare_digest(signature, self._server_signature):
            raise AuthenticationFailedError("SCRAM: the server did not prove the credential")


def _text(message: bytes) -> str:
    try:
        return message.decode()
    except UnicodeDecodeError:
        raise AuthenticationFailedError("SCRAM: a server message is not UTF-8") from None
