"""SASL PLAIN (RFC 4616): the client sends its name and password in one message.

Checked against the user's stored SCRAM credential (any SCRAM mechanism the user has), so
one ``rillet users create`` serves both; the password itself is never stored. Only safe
over TLS: the password crosses the link.
"""

from __future__ import annotations

from rillet.broker.sasl.scram import (
    MECHANISMS,
    Lookup,
    SaslAuthenticationFailed,
    password_matches,
)

MAX_MESSAGE_BYTES = 1024


def authenticate_plain(message: bytes, lookup: Lookup) -> str:
    """The user the message proves, or SaslAuthenticationFailed."""
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
    for mechanism in MECHANISMS:
        credential = lookup(user, mechanism)
        if credential is not None and password_matches(credential, password):
            return user
    raise SaslAuthenticationFailed("Authentication failed: invalid user credentials")
