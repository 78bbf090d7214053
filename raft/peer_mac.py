"""HMAC-SHA256 primitives shared by the two places where nodes prove the cluster secret to
each other: the Raft transport's handshake and the brokers' per-connection node handshake.

Every MAC is over length-prefixed parts, so no two different part lists MAC the same bytes;
each use derives its own key from the secret with a purpose label, so a proof made for one
protocol is never valid in the other.
"""

from __future__ import annotations

import hashlib
import hmac
import struct

from rillet.raft.errors import MissingSecret

PART_LENGTH = struct.Struct(">I")
NONCE_BYTES = 16
MAC_BYTES = 32


def derive_key(secret: str, purpose: bytes) -> bytes:
    """The key for one protocol (``purpose``) derived from the cluster secret. Raises
    MissingSecret for an empty secret: its key would be public."""
    if not secret:
        raise MissingSecret(f"no cluster secret to derive the {purpose.decode()!r} key from")
    return hmac.new(secret.encode(), purpose, hashlib.sha256).digest()


def mac_parts(key: bytes, *parts: bytes) -> bytes:
    """HMAC-SHA256 over ``parts``, each prefixed with its length."""
    mac = hmac.new(key, digestmod=hashlib.sha256)
    for part in parts:
        mac.update(PART_LENGTH.pack(len(part)))
        mac.update(part)
    return mac.digest()


def macs_equal(a: bytes, b: bytes) -> bool:
    """Constant-time comparison of two MACs."""
    return hmac.compare_digest(a, b)
