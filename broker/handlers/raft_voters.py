"""AddRaftVoter and RemoveRaftVoter (apis 80 and 81): voter changes on the Raft leader.

Only the Raft leader changes the configuration (one server at a time; the engine waits for
its own no-op and the previous change to commit, catches a new voter up, then commits the
entry). Another node forwards the request there once. The answer comes when the change is
committed, or says why it was not made: the core's refusal as INVALID_REQUEST (a change
under way, the last voter), a voter that already is one or is not one, a replica that did
not catch up in time (REQUEST_TIMED_OUT), a cluster whose feature level is still the
previous release's (UNSUPPORTED_VERSION: its nodes could not read the entry), or the
pysyncobj engine (UNKNOWN_API: its voter set is fixed).
"""

from __future__ import annotations

from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.controller_calls import forward_once
from rillet.metadata_quorum.features import RAFT_DIRECTORY_IDS, refusal_below
from rillet.raft.core_errors import MembershipChangeRefused
from rillet.raft.errors import (
    MembershipUnsupported,
    NotLeaderError,
    ProposalOutcomeUnknown,
    RaftError,
)
from rillet.wire.error_codes import ErrorCode
from rillet.wire.raft_voter_messages import (
    AddRaftVoterRequest,
    ObserveRaftRequest,
    RaftVoterResponse,
    RemoveRaftVoterRequest,
)

DIRECTORY_ID_CHARS = 32


async def handle_add_raft_voter(ctx: BrokerContext, req: AddRaftVoterRequest) -> RaftVoterResponse:
    return await _change(ctx, req)


async def handle_remove_raft_voter(
    ctx: BrokerContext, req: RemoveRaftVoterRequest
) -> RaftVoterResponse:
    return await _change(ctx, req)


def _not_controller(response: RaftVoterResponse) -> int | None:
    return -1 if response.error_code == ErrorCode.NOT_CONTROLLER else None


def invalid_voter_key(voter_id: int, directory_id: str) -> str | None:
    if voter_id < 1:
        return f"voter ids start at 1, got {voter_id}"
    if len(directory_id) not in (0, DIRECTORY_ID_CHARS) or any(
        c not in "0123456789abcdef" for c in directory_id
    ):
        return f"a directory id is 32 hex digits, got {directory_id!r}"
    return None


async def _change(
    ctx: BrokerContext, req: AddRaftVoterRequest | RemoveRaftVoterRequest
) -> RaftVoterResponse:
    invalid = invalid_voter_key(req.voter_id, req.voter_directory_id)
    if invalid is not None:
        return RaftVoterResponse(ErrorCode.INVALID_VOTER_KEY, invalid)
    quorum = ctx.metadata.quorum
    if quorum is None or not quorum.is_leader():
        if req.forwarded:
            return RaftVoterResponse(ErrorCode.NOT_CONTROLLER, "not the Raft leader")
        return await forward_once(
            ctx, req, lambda why: RaftVoterResponse(ErrorCode.NOT_CONTROLLER, why), _not_controller
        )
    too_early = refusal_below(ctx.metadata.state, RAFT_DIRECTORY_IDS, "a voter change")
    if too_early is not None:  # a node of the previous release could not read the entry
        return RaftVoterResponse(ErrorCode.UNSUPPORTED_VERSION, too_early)
    try:
        if isinstance(req, AddRaftVoterRequest):
            listener = req.listener_address or _registered_listener(ctx, req.voter_id)
            await quorum.add_voter(req.voter_id, req.voter_directory_id, req.raft_address, listener)
        else:
            await quorum.remove_voter(req.voter_id, req.voter_directory_id)
    except MembershipUnsupported as exc:
        return RaftVoterResponse(ErrorCode.UNKNOWN_API, str(exc))
    except NotLeaderError as exc:
        return RaftVoterResponse(ErrorCode.NOT_CONTROLLER, str(exc))
    except ProposalOutcomeUnknown as exc:
        return RaftVoterResponse(ErrorCode.REQUEST_TIMED_OUT, str(exc))
    except MembershipChangeRefused as exc:
        return RaftVoterResponse(_refusal_code(str(exc)), str(exc))
    except RaftError as exc:  # did not catch up in time, or a bad address
        return RaftVoterResponse(ErrorCode.REQUEST_TIMED_OUT, str(exc))
    return RaftVoterResponse(ErrorCode.NONE)


def _registered_listener(ctx: BrokerContext, node_id: int) -> str:
    """The native listener the node registered as a broker with ("" if it did not)."""
    broker = ctx.metadata.state.brokers.get(node_id)
    return "" if broker is None else f"{broker.host}:{broker.port}"


def _refusal_code(reason: str) -> ErrorCode:
    if "is already a voter" in reason:
        return ErrorCode.DUPLICATE_VOTER
    if "is not a voter" in reason:
        return ErrorCode.VOTER_NOT_FOUND
    return ErrorCode.INVALID_REQUEST


def handle_observe_raft(ctx: BrokerContext, req: ObserveRaftRequest) -> RaftVoterResponse:
    """The leader sends the log to the node from now on (until it leads no more)."""
    quorum = ctx.metadata.quorum
    if quorum is None or not quorum.is_leader():
        return RaftVoterResponse(ErrorCode.NOT_CONTROLLER, "not the Raft leader")
    try:
        quorum.observe(req.broker_id, req.raft_address)
    except MembershipUnsupported as exc:
        return RaftVoterResponse(ErrorCode.UNKNOWN_API, str(exc))
    except RaftError as exc:
        return RaftVoterResponse(ErrorCode.INVALID_REQUEST, str(exc))
    return RaftVoterResponse(ErrorCode.NONE)
