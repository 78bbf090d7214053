"""The users' SCRAM credentials, as the metadata log holds them (one per user and mechanism).

A credential is what a node needs to check a client and prove itself: the salt, the
iteration count, StoredKey and ServerKey (RFC 5802). The password is never in the log, and
neither is the salted password it was derived from: the client that sets a password sends
the salted password, from which the controller derives the two keys it records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class UserScramCredential:
    """A metadata record: ``name``'s credential for ``mechanism`` from now on."""

    name: str
    mechanism: str
    salt: bytes
    iterations: int
    stored_key: bytes
    server_key: bytes


@dataclass(frozen=True, slots=True)
class RemoveUserScramCredential:
    """A metadata record: ``name`` has no ``mechanism`` credential any more."""

    name: str
    mechanism: str


@dataclass(slots=True)
class ScramRegistry:
    credentials: dict[tuple[str, str], UserScramCredential] = field(default_factory=dict)

    def apply(self, record: UserScramCredential | RemoveUserScramCredential) -> None:
        key = (record.name, record.mechanism)
        if isinstance(record, UserScramCredential):
            self.credentials[key] = record
        else:
            self.credentials.pop(key, None)

    def get(self, name: str, mechanism: str) -> UserScramCredential | None:
        return self.credentials.get((name, mechanism))

    def users(self) -> dict[str, list[tuple[str, int]]]:
        """name -> [(mechanism, iterations)], sorted."""
        out: dict[str, list[tuple[str, int]]] = {}
        for (name, mechanism), c in sorted(self.credentials.items()):
            out.setdefault(name, []).append((mechanism, c.iterations))
        return out

    def to_doc(self) -> list[list[Any]]:
        return [
            [c.name, c.mechanism, c.salt, c.iterations, c.stored_key, c.server_key]
            for _, c in sorted(self.credentials.items())
        ]

    @classmethod
    def from_doc(cls, doc: Any) -> ScramRegistry:
        registry = cls()
        for name, mechanism, salt, iterations, stored, server in doc:
            registry.apply(
                UserScramCredential(
                    str(name),
                    str(mechanism),
                    bytes(salt),
                    int(iterations),
                    bytes(stored),
                    bytes(server),
                )
            )
        return registry
