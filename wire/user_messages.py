"""Users' SCRAM credentials: set, remove and list them (Kafka's apis 50 and 51).

The client sends the salted password (PBKDF2 of the password with the salt and iteration
count), never the password; the controller keeps the two keys derived from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rillet.wire.forwarding import ForwardedFor
from rillet.wire.request import Request


@dataclass(frozen=True, slots=True)
class ScramCredentialUpsert:
    name: str
    mechanism: str  # SCRAM-SHA-256 or SCRAM-SHA-512
    iterations: int
    salt: bytes
    salted_password: bytes


@dataclass(frozen=True, slots=True)
class ScramCredentialDeletion:
    name: str
    mechanism: str


@dataclass(frozen=True, slots=True)
class AlterUserScramCredentialsRequest(Request["AlterUserScramCredentialsResponse"]):
    """Sent to any node: one that is not the controller forwards it (``forwarded``: it was,
    so it is not forwarded again)."""

    upsertions: list[ScramCredentialUpsert]
    deletions: list[ScramCredentialDeletion]
    forwarded: bool = False
    forwarded_for: ForwardedFor | None = None  # set by the node that forwards it


@dataclass(frozen=True, slots=True)
class AlterUserScramCredentialsResponse:
    """All or nothing: one error for the whole request."""

    error_code: int
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class DescribeUserScramCredentialsRequest(Request["DescribeUserScramCredentialsResponse"]):
    users: list[str] | None = None  # None: every user


@dataclass(frozen=True, slots=True)
class CredentialInfo:
    mechanism: str
    iterations: int


@dataclass(frozen=True, slots=True)
class DescribedUser:
    name: str
    error_code: int  # RESOURCE_NOT_FOUND for a named user without credentials
    credentials: list[CredentialInfo]


@dataclass(frozen=True, slots=True)
class DescribeUserScramCredentialsResponse:
    users: list[DescribedUser]
