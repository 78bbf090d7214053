"""SASL PLAIN (RFC 4616): the client sends its name and password in one message.

Checked against the user's stored SCRAM credentials, so one ``rillet users create`` serves
both; the password itself is never stored. Only safe over TLS: the password crosses the
link.

The check derives the password once per SCRAM mechanism (PBKDF2, thousands of rounds:
milliseconds of CPU), so it is a :class:`PlainCheck` the connection runs off the event
loop. Every check does the same work whether the user exists or not: a mechanism the user
has no credential for is checked against a decoy (broker/security/sasl/decoys.py), which no
password matches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rillet.broker.security.sasl.scram import (
    MECHANISMS,
    Decoy,
    Lookup,
    SaslAuthenticationFailed,
    ScramCredential,
    password_matches,
)

MAX_MESSAGE_BYTES = 1024


@dataclass(frozen=True, slots=True)
class PlainCheck:
    """One PLAIN login's password check; :meth:`check` touches no shared state."""

    user: str
    password: str
    credentials: tuple[ScramCredential, ...]  # one per SCRAM mechanism, decoys included
    known: bool  # whether any of them is the user's own
    matches: Callable[[ScramCredential, str], bool] = password_matches

    def check(self) -> bool:
        """Whether the password matches one of the user's credentials. A failure always
        derives it once per mechanism; a success may stop at the first match."""
        for credential in self.credentials:
            if self.matches(credential, self.password):
                return self.known
        return False


def plain_check(message: bytes, lookup: Lookup, decoy: Decoy) -> PlainCheck:
    """The check of a PLAIN message, or SaslAuthenticationFailed if it is malformed."""
    if len(message) > MAX_MESSAGE_BYTES:
        raise SaslAuthenticationFailed("PLAIN message too long")
    parts = message.split(b"\0")
    if len(parts) != 3:
        raise SaslAuthenticationFailed("malformed PLAIN message")
    authzid, user_bytes, password_bytes = parts
    try:
        user, password = user_bytes.decode(), password_bytes.decode()
    except UnicodeDecodeError:
        raise SaslAuthenticationFailed("malformed PLAIN message") from None
    if authzid and authzid.decode(errors="replace") != user:
        raise SaslAuthenticationFailed("PLAIN: acting as another user is not allowed")
    credentials = []
    known = False
    for mechanism in MECHANISMS:
        credential = lookup(user, mechanism)
        known = known or credential is not None
        credentials.append(credential if credential is not None else decoy(user, mechanism))
    return PlainCheck(user, password, tuple(credentials), known)


def authenticate_plain(message: bytes, lookup: Lookup, decoy: Decoy) -> str:
    """The user the message proves, or SaslAuthenticationFailed (the check runs here)."""
    login = plain_check(message, lookup, decoy)
    if not login.check():
        raise SaslAuthenticationFailed("Authentication failed: invalid user credentials")
    return login.user
