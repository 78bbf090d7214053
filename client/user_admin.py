"""Users' SCRAM credentials from the client: set (from a password), remove and list.

The password never leaves the client: it sends the salt, the iteration count and the
salted password (PBKDF2), as Kafka's ``alterUserScramCredentials`` does. Changes go to the
controller, resent after a metadata refresh while a node answers NOT_CONTROLLER (or the
metadata commit's fate is unknown) until the timeout; a change resent after it was carried
out changes nothing more.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence

from rillet.client.cluster import ClusterClient
from rillet.client.controller_changes import ToController, decided
from rillet.client.errors import (
    error_for,
)
from rillet.wire.error_codes import ErrorCode
from rillet.wire.user_messages import (
    AlterUserScramCredentialsRequest,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
    ScramCredentialDeletion,
    ScramCredentialUpsert,
)

DIGESTS = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
DEFAULT_ITERATIONS = 8192
SALT_BYTES = 32


def upsertion(
    name: str, password: str, mechanism: str, iterations: int = DEFAULT_ITERATIONS
) -> ScramCredentialUpsert:
    if mechanism not in DIGESTS:
        raise ValueError(f"mechanism must be one of {', '.join(DIGESTS)}, not {mechanism!r}")
    salt = os.urandom(SALT_BYTES)
    salted = hashlib.pbkdf2_hmac(DIGESTS[mechanism], password.encode(), salt, iterations)
    return ScramCredentialUpsert(name, mechanism, iterations, salt, salted)


async def alter(
    cluster: ClusterClient,
    to_controller: ToController,
    upserts: Sequence[ScramCredentialUpsert],
    deletions: Sequence[tuple[str, str]],
    timeout_s: float,
    backoff_s: float,
) -> None:
    request = AlterUserScramCredentialsRequest(
        list(upserts), [ScramCredentialDeletion(n, m) for n, m in deletions]
    )
    await decided(
        cluster,
        to_controller,
        request,
        lambda r: (
            None if r.error_code == ErrorCode.NONE else error_for(r.error_code, r.error_message)
        ),
        "credential change",
        timeout_s,
        backoff_s,
    )


async def describe(
    to_controller: ToController, names: Sequence[str] | None
) -> dict[str, list[tuple[str, int]]]:
    """name -> [(mechanism, iterations)]; a named user without credentials raises
    ResourceNotFoundError."""
    request = DescribeUserScramCredentialsRequest(None if names is None else list(names))
    response: DescribeUserScramCredentialsResponse = await to_controller(request)
    out: dict[str, list[tuple[str, int]]] = {}
    for user in response.users:
        if user.error_code != ErrorCode.NONE:
            raise error_for(user.error_code, f"user {user.name!r} has no SCRAM credentials")
        out[user.name] = [(c.mechanism, c.iterations) for c in user.credentials]
    return out
