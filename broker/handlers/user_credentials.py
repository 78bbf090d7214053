"""Users' SCRAM credentials: set and removed on the controller, listed from any node.

A change is decided by the controller (a node that is not the controller forwards it
there, once), all of a request in one metadata entry. The
salted password a client sends is turned into StoredKey and ServerKey here, on the
controller; neither it nor the password is recorded. Every node applies the metadata log,
so every node can authenticate the user a moment later.
"""

from __future__ import annotations

from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.controller_calls import decide_on_controller, forward_once
from rillet.metadata_quorum.scram_registry import UserScramCredential
from rillet.wire.error_codes import ErrorCode
from rillet.wire.scram import MAX_ITERATIONS, MIN_ITERATIONS, keys_from_salted
from rillet.wire.scram import SCRAM_DIGESTS as MECHANISMS
from rillet.wire.user_messages import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    CredentialInfo,
    DescribedUser,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
    ScramCredentialUpsert,
)


async def handle_alter_user_scram_credentials(
    ctx: BrokerContext, req: AlterUserScramCredentialsRequest
) -> AlterUserScramCredentialsResponse:
    for name, mechanism in [(u.name, u.mechanism) for u in req.upsertions] + [
        (d.name, d.mechanism) for d in req.deletions
    ]:
        if not name:
            return AlterUserScramCredentialsResponse(
                ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
            )
        if mechanism not in MECHANISMS:
            return AlterUserScramCredentialsResponse(
                ErrorCode.UNSUPPORTED_SASL_MECHANISM,
                f"{mechanism!r} is not one of {', '.join(MECHANISMS)}",
            )
    for u in req.upsertions:
        refusal = _unacceptable(u)
        if refusal is not None:
            return AlterUserScramCredentialsResponse(ErrorCode.UNACCEPTABLE_CREDENTIAL, refusal)
    if not ctx.metadata.controller_is_local() and not req.forwarded:
        return await forward_once(
            ctx,
            req,
            lambda why: AlterUserScramCredentialsResponse(ErrorCode.NOT_CONTROLLER, why),
            lambda r: -1 if r.error_code == ErrorCode.NOT_CONTROLLER else None,
        )
    upserts = [_credential(u) for u in req.upsertions]
    deletions = [(d.name, d.mechanism) for d in req.deletions]
    outcome = await decide_on_controller(
        ctx, lambda ctl, state, now: ctl.alter_scram_credentials(state, upserts, deletions)
    )
    return AlterUserScramCredentialsResponse(outcome.error, outcome.message)


def _unacceptable(u: ScramCredentialUpsert) -> str | None:
    """Kafka's message refusing the upsertion's iteration count or salt, else None."""
    if u.iterations < MIN_ITERATIONS:
        return f"Too few iterations (at least {MIN_ITERATIONS})"
    if u.iterations > MAX_ITERATIONS:
        return f"Too many iterations (at most {MAX_ITERATIONS})"
    if not u.salt:
        return "A salt is required"
    return None


def _credential(u: ScramCredentialUpsert) -> UserScramCredential:
    keys = keys_from_salted(MECHANISMS[u.mechanism], u.salted_password)
    return UserScramCredential(
        u.name, u.mechanism, u.salt, u.iterations, keys.stored_key, keys.server_key
    )


def handle_describe_user_scram_credentials(
    ctx: BrokerContext, req: DescribeUserScramCredentialsRequest
) -> DescribeUserScramCredentialsResponse:
    users = ctx.metadata.state.scram.users()
    names = sorted(users) if req.users is None else list(dict.fromkeys(req.users))
    return DescribeUserScramCredentialsResponse(
        [
            DescribedUser(
                name,
                ErrorCode.NONE if name in users else ErrorCode.RESOURCE_NOT_FOUND,
                [CredentialInfo(m, i) for m, i in users.get(name, [])],
            )
            for name in names
        ]
    )
