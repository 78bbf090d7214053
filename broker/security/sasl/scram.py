"""SCRAM (RFC 5802, RFC 7677): the stored credential and the server side of an exchange.

Sans-I/O: :class:`ScramServer` takes the client's two messages and returns the server's
two answers (or raises :class:`SaslAuthenticationFailed`); the credential lookup is a
function passed in. The client's proof is checked by a :class:`ScramProof` of its own, a
pure computation the connection may run on another thread (``final`` does all three steps
at once). An unknown user is answered with a decoy credential when one is given
(broker/security/sasl/decoys.py), and fails only at the proof, as a wrong password does.

A credential keeps only what the server needs to check a client and prove itself: the
salt, the iteration count, StoredKey and ServerKey; never the password.
Kafka's mechanisms, names and minimum iteration count (4096) are followed, so Kafka
clients configured for ``SCRAM-SHA-256`` or ``SCRAM-SHA-512`` authenticate unchanged.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from rillet.broker.errors import BrokerError
from rillet.wire.scram import (
    MIN_ITERATIONS,
    SCRAM_DIGESTS,
    attributes,
    keys_from_salted,
    salted_password,
    signature,
    unescape_name,
    xor,
)

MECHANISMS = SCRAM_DIGESTS
DEFAULT_ITERATIONS = 8192
SALT_BYTES = 32
MAX_MESSAGE_BYTES = 4096


class SaslAuthenticationFailed(BrokerError):
    """The client did not prove its credentials (the message is safe to send back)."""


@dataclass(frozen=True, slots=True)
class ScramCredential:
    mechanism: str
    salt: bytes
    iterations: int
    stored_key: bytes
    server_key: bytes


def make_credential(
    mechanism: str,
    password: str,
    iterations: int = DEFAULT_ITERATIONS,
    salt: bytes | None = None,
) -> ScramCredential:
    if mechanism not in MECHANISMS:
        raise ValueError(f"unknown SCRAM mechanism {mechanism!r}")
    if iterations < MIN_ITERATIONS:
        raise ValueError(f"iterations must be at least {MIN_ITERATIONS}")
    salt = salt if salt is not None else os.urandom(SALT_BYTES)
    digest = MECHANISMS[mechanism]
    keys = keys_from_salted(digest, salted_password(digest, password, salt, iterations))
    return ScramCredential(mechanism, salt, iterations, keys.stored_key, keys.server_key)


def password_matches(credential: ScramCredential, password: str) -> bool:
    """Whether ``password`` derives ``credential`` (SASL PLAIN checks against it)."""
    again = make_credential(credential.mechanism, password, credential.iterations, credential.salt)
    return hmac.compare_digest(again.stored_key, credential.stored_key)


Lookup = Callable[[str, str], ScramCredential | None]  # (user, mechanism) -> credential
Decoy = Callable[[str, str], ScramCredential]  # (user, mechanism) -> a stand-in credential


@dataclass(frozen=True, slots=True)
class ScramProof:
    """The client's proof and what checking it needs: :meth:`check` touches no shared state,
    so it may run off the event loop."""

    digest: str
    credential: ScramCredential
    auth_message: bytes
    proof: bytes

    def check(self) -> bytes | None:
        """The server-final message when the proof matches the credential, else None."""
        client_signature = signature(self.credential.stored_key, self.auth_message, self.digest)
        if len(self.proof) != len(client_signature):
            return None
        client_key = xor(self.proof, client_signature)
        if not hmac.compare_digest(
            hashlib.new(self.digest, client_key).digest(), self.credential.stored_key
        ):
            return None
        server_signature = signature(self.credential.server_key, self.auth_message, self.digest)
        return b"v=" + base64.b64encode(server_signature)


class ScramServer:
    """One SCRAM exchange: ``first(client_first) -> server_first``, then
    ``final(client_final) -> server_final``; ``user`` names who authenticated."""

    def __init__(
        self,
        mechanism: str,
        lookup: Lookup,
        server_nonce: Callable[[], str] = lambda: secrets.token_urlsafe(24),
        decoy: Decoy | None = None,
    ) -> None:
        """``server_nonce``: the server's part of the nonce (fixed only in tests);
        ``decoy``: the credential an unknown user is answered with (None: such a user
        fails at once)."""
        if mechanism not in MECHANISMS:
            raise ValueError(f"unknown SCRAM mechanism {mechanism!r}")
        self.mechanism = mechanism
        self._digest = MECHANISMS[mechanism]
        self._lookup = lookup
        self._server_nonce = server_nonce
        self._decoy = decoy
        self._known = False
        self.user: str | None = None
        self._credential: ScramCredential | None = None
        self._nonce = ""
        self._client_first_bare = ""
        self._server_first = ""
        self.done = False

    def first(self, message: bytes) -> bytes:
        text = _text(message)
        gs2, sep, bare = _split_gs2(text)
        if not sep:
            raise SaslAuthenticationFailed("malformed SCRAM client-first message")
        fields = attributes(bare)
        user = unescape_name(fields.get("n", ""))
        client_nonce = fields.get("r", "")
        if not user or not client_nonce or gs2.startswith("p"):
            raise SaslAuthenticationFailed("malformed SCRAM client-first message")
        credential = self._lookup(user, self.mechanism)
        self._known = credential is not None
        if credential is None:
            if self._decoy is None:
                raise SaslAuthenticationFailed("Authentication failed: invalid user credentials")
            credential = self._decoy(user, self.mechanism)
        self._credential = credential
        self._nonce = client_nonce + self._server_nonce()
        self._client_first_bare = bare
        salt = base64.b64encode(credential.salt).decode()
        self._server_first = f"r={self._nonce},s={salt},i={credential.iterations}"
        self.user = user
        return self._server_first.encode()

    def final(self, message: bytes) -> bytes:
        """The server-final message; the proof checked here, on the caller's thread."""
        return self.finish(self.proof(message).check())

    def proof(self, message: bytes) -> ScramProof:
        """The client-final message's proof, to check (raises if the message is malformed
        or out of order)."""
        credential = self._credential
        if credential is None or self.done:
            raise SaslAuthenticationFailed("SCRAM client-final message out of order")
        text = _text(message)
        without_proof, sep, proof_field = text.rpartition(",p=")
        fields = attributes(without_proof)
        if not sep or fields.get("r") != self._nonce or "c" not in fields:
            raise SaslAuthenticationFailed("malformed SCRAM client-final message")
        try:
            proof = base64.b64decode(proof_field, validate=True)
        except ValueError:
            raise SaslAuthenticationFailed("malformed SCRAM client proof") from None
        auth_message = f"{self._client_first_bare},{self._server_first},{without_proof}"
        return ScramProof(self._digest, credential, auth_message.encode(), proof)

    def finish(self, server_final: bytes | None) -> bytes:
        """The checked proof's outcome: the server-final message, or the failure (always
        for a decoy's user)."""
        if server_final is None or not self._known:
            raise SaslAuthenticationFailed("Authentication failed: invalid user credentials")
        self.done = True
        return server_final


def _text(message: bytes) -> str:
    if len(message) > MAX_MESSAGE_BYTES:
        raise SaslAuthenticationFailed("SCRAM message too long")
    try:
        return message.decode()
    except UnicodeDecodeError:
        raise SaslAuthenticationFailed("SCRAM message is not UTF-8") from None


def _split_gs2(text: str) -> tuple[str, bool, str]:
    """(gs2 header, found, client-first-bare): the header is "n,," or "y,," (or with an
    authorization id, "n,a=name,")."""
    first = text.find(",")
    second = text.find(",", first + 1) if first >= 0 else -1
    if second < 0:
        return "", False, ""
    return text[: second + 1], True, text[second + 1 :]
