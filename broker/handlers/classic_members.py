"""Classic apis of a classic member in a consumer-protocol group (KIP-848's mixed groups;
the rules are in ``metadata_quorum.classic_members``). Every request is answered once its
decision is committed; none is held, as no join round runs in such a group.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.controller_calls import decide_on_controller
from rillet.metadata_quorum import classic_members as cm
from rillet.metadata_quorum.controller import Controller
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.state import MetadataState
from rillet.wire import classic_group_messages as cgm
from rillet.wire.error_codes import ErrorCode


async def join(
    ctx: BrokerContext, req: cgm.ClassicJoinGroupRequest
) -> cgm.ClassicJoinGroupResponse:
    member_id = req.member_id
    if not member_id:
        member_id = f"{req.client_id or 'member'}-{uuid.uuid4()}"
        if req.require_known_member_id:
            return cgm.ClassicJoinGroupResponse(ErrorCode.MEMBER_ID_REQUIRED, member_id=member_id)

    def decide(ctl: Controller, s: MetadataState, now: int) -> Decision:
        hb = cm.join_heartbeat(s, req, member_id)
        return hb if isinstance(hb, Decision) else ctl.groups.heartbeat(s, hb, now)

    outcome = await decide_on_controller(ctx, decide)
    if outcome.error != ErrorCode.NONE:
        return cgm.ClassicJoinGroupResponse(
            outcome.group_error, member_id=member_id, error_message=outcome.message
        )
    group = ctx.metadata.state.groups.group(req.group_id)
    member = group.members.get(member_id) if group is not None else None
    if member is None:
        return cgm.ClassicJoinGroupResponse(ErrorCode.UNKNOWN_MEMBER_ID, member_id=member_id)
    return cgm.ClassicJoinGroupResponse(
        ErrorCode.NONE,
        member.generation,
        cm.CONSUMER_PROTOCOL_TYPE,
        member.member.classic_protocol,
        "",  # never the leader: the coordinator assigns
        member_id,
    )


def sync(ctx: BrokerContext, req: cgm.ClassicSyncGroupRequest) -> cgm.ClassicSyncGroupResponse:
    state = ctx.metadata.state
    member = cm.classic_member(state, req.group_id, req.member_id, req.generation_id)
    if isinstance(member, ErrorCode):
        return cgm.ClassicSyncGroupResponse(member)
    return cgm.ClassicSyncGroupResponse(
        ErrorCode.NONE,
        cm.CONSUMER_PROTOCOL_TYPE,
        member.member.classic_protocol,
        cm.assignment_bytes(state, req.group_id, member),
    )


async def heartbeat(
    ctx: BrokerContext, req: cgm.ClassicHeartbeatRequest
) -> cgm.ClassicHeartbeatResponse:
    def decide(ctl: Controller, s: MetadataState, now: int) -> Decision:
        member = cm.classic_member(s, req.group_id, req.member_id, req.generation_id)
        if isinstance(member, ErrorCode):
            return Decision([], member)
        ctl.groups.renew(req.group_id, req.member_id, member.member.session_timeout_ms, now)
        if cm.must_rejoin(s, req.group_id, member):
            return Decision([], ErrorCode.REBALANCE_IN_PROGRESS)
        return Decision([])

    outcome = await decide_on_controller(ctx, decide)
    return cgm.ClassicHeartbeatResponse(outcome.group_error, outcome.message)


async def leave(
    ctx: BrokerContext, req: cgm.ClassicLeaveGroupRequest
) -> cgm.ClassicLeaveGroupResponse:
    left = []
    for m in req.members:
        outcome = await decide_on_controller(ctx, _leaving(req.group_id, m.member_id))
        left.append(cgm.ClassicLeftMember(m.member_id, m.group_instance_id, outcome.group_error))
    return cgm.ClassicLeaveGroupResponse(ErrorCode.NONE, left)


def _leaving(group_id: str, member_id: str) -> Callable[[Controller, MetadataState, int], Decision]:
    return lambda ctl, s, now: ctl.groups.leave(s, group_id, member_id)
