"""SCRAM's primitives (RFC 5802, RFC 7677), shared by the client's and the node's side.

Why in ``wire``: both ends of a SCRAM exchange derive the same keys from a salted password,
sign the same auth message and read the same ``k=value`` attributes; the client
(``client/sasl.py``) and the node (``broker/security/sasl/scram.py``, and the admin api
that stores a credential a Kafka client salted) may both import ``wire``, so the
derivation lives here once and the two sides cannot drift apart. What each side does with
a malformed message (its own typed error) stays with that side.

Kafka's mechanism names and its minimum iteration count are followed, so Kafka clients
configured for ``SCRAM-SHA-256`` or ``SCRAM-SHA-512`` interoperate unchanged.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

# Kafka's mechanism names -> the hash each uses.
SCRAM_DIGESTS = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
# Fewer iterations are refused on either side (Kafka's minimum).
MIN_ITERATIONS = 4096
# More are refused too: a client told to derive more would hold its CPU for seconds, and a
# credential stored with more would cost every login as much (Kafka's clients cap it here).
MAX_ITERATIONS = 1_000_000


@dataclass(frozen=True, slots=True)
class ScramKeys:
    """What a salted password derives: the client proves ClientKey, the server keeps
    StoredKey (its hash) and ServerKey, never the password."""

    client_key: bytes
    stored_key: bytes
    server_key: bytes


def salted_password(digest: str, password: str, salt: bytes, iterations: int) -> bytes:
    """Hi(password, salt, iterations): PBKDF2 with HMAC over ``digest``."""
    return hashlib.pbkdf2_hmac(digest, password.encode(), salt, iterations)


def keys_from_salted(digest: str, salted: bytes) -> ScramKeys:
    client_key = hmac.digest(salted, b"Client Key", digest)
    return ScramKeys(
        client_key,
        hashlib.new(digest, client_key).digest(),
        hmac.digest(salted, b"Server Key", digest),
    )


def signature(key: bytes, auth_message: bytes, digest: str) -> bytes:
    """HMAC(key, AuthMessage): the client signature (key StoredKey) or the server's
    (key ServerKey)."""
    return hmac.digest(key, auth_message, digest)


def xor(left: bytes, right: bytes) -> bytes:
    """ClientProof = ClientKey XOR ClientSignature (and back); equal lengths only."""
    return bytes(a ^ b for a, b in zip(left, right, strict=True))


def attributes(text: str) -> dict[str, str]:
    """A SCRAM message's ``k=value`` attributes (single-letter keys; the first of a
    repeated key wins; anything else is skipped, so a caller checks what it needs)."""
    out: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if sep and len(key) == 1:
            out.setdefault(key, value)
    return out


def escape_name(name: str) -> str:
    """A user name as the ``n=`` attribute carries it ("=" and "," escaped)."""
    return name.replace("=", "=3D").replace(",", "=2C")


def unescape_name(name: str) -> str:
    return name.replace("=2C", ",").replace("=3D", "=")
