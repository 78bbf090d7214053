"""Stand-in credentials for users that do not exist, so a login cannot tell them apart.

A login for an unknown user must cost the server what a known user's costs and get the
same answers, or its timing and its SCRAM server-first message tell a guesser which users
exist. A decoy is derived from the user name and a key the node draws at start: the same
name gets the same salt every time (a real user's salt does not change between logins
either), another node or a restart gives another one, and no password derives it.
"""

from __future__ import annotations

import hashlib
import hmac

from rillet.broker.security.sasl.scram import (
    DEFAULT_ITERATIONS,
    MECHANISMS,
    SALT_BYTES,
    Lookup,
    ScramCredential,
)

KEY_BYTES = 32


def decoy_credential(key: bytes, user: str, mechanism: str) -> ScramCredential:
    """A credential ``user`` would have with the default iteration count, that no password
    matches (its keys come from ``key``, which never leaves the node)."""
    digest = MECHANISMS[mechanism]

    def part(label: bytes, size: int) -> bytes:
        message = label + b"\0" + mechanism.encode() + b"\0" + user.encode()
        return hmac.digest(key, message, "sha512")[:size]

    size = hashlib.new(digest).digest_size
    return ScramCredential(
        mechanism,
        part(b"salt", SALT_BYTES),
        DEFAULT_ITERATIONS,
        part(b"stored", size),
        part(b"server", size),
    )


def credential_or_decoy(
    lookup: Lookup, key: bytes, user: str, mechanism: str
) -> tuple[ScramCredential, bool]:
    """(the user's credential, True), or (a decoy, False) when it has none."""
    credential = lookup(user, mechanism)
    if credential is not None:
        return credential, True
    return decoy_credential(key, user, mechanism), False
