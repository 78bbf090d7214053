"""SASL for rillet's client: a login (mechanism, user, password) and the client side of the
exchange, sans-I/O.

PLAIN sends one message (``\\0user\\0password``: use it over TLS only); SCRAM (RFC 5802,
RFC 7677) sends two and checks the server's final signature, so the client also knows it
talked to a server that holds the user's credential. Nodes whose native listener sets
``sasl_mechanisms`` require a login before any other request.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass, field

from rillet.client.errors import AuthenticationFailedError

SCRAM_DIGESTS = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
MECHANISMS = (*SCRAM_DIGESTS, "PLAIN")
MIN_ITERATIONS = 4096  # a server asking for fewer is not trusted (as Kafka's clients do)
MAX_ITERATIONS = 1_000_000


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
        self._first_bare = f"n={_escape(login.username)},r={self._nonce}"
        self._server_signature = b""

    def first(self) -> bytes:
        return ("n,," + self._first_bare).encode()

    def final(self, server_first: bytes) -> bytes:
        text = _text(server_first)
        fields = _fields(text)
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
        salted = hashlib.pbkdf2_hmac(digest, self._login.password.encode(), salt, iterations)
        client_key = hmac.digest(salted, b"Client Key", digest)
        stored_key = hashlib.new(digest, client_key).digest()
        without_proof = f"c=biws,r={nonce}"
        auth_message = f"{self._first_bare},{text},{without_proof}".encode()
        signature = hmac.digest(stored_key, auth_message, digest)
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        server_key = hmac.digest(salted, b"Server Key", digest)
        self._server_signature = hmac.digest(server_key, auth_message, digest)
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def verify(self, server_final: bytes) -> None:
        fields = _fields(_text(server_final))
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


def _fields(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if sep and len(key) == 1:
            out.setdefault(key, value)
    return out


def _escape(name: str) -> str:
    return name.replace("=", "=3D").replace(",", "=2C")
