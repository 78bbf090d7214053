"""Classic consumer-group apis (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) and the
Kafka-shaped DescribeGroups / ListGroups.

Like the other group apis they are served by the node running the controller and answered
NOT_COORDINATOR elsewhere (FindCoordinator names the controller). A request becomes a
decision of the classic group coordinator with a *ticket*; its answer comes back through the
controller service once the records it depends on are committed — right away for most
requests, at the end of the join round for a JoinGroup (up to the rebalance timeout), when
the leader's assignment is committed for a follower's SyncGroup. The wait is bounded; a
request that outlives its controller is answered NOT_COORDINATOR and the client re-sends it
to the next one.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import TypeVar

import trio

from rillet.broker.handlers import classic_members
from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.controller_calls import decide_on_controller
from rillet.broker.handlers.deferred import Deferred
from rillet.metadata_quorum.classic_members import held_by_consumer_members
from rillet.metadata_quorum.controller import Controller
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.state import MetadataState
from rillet.wire import classic_group_messages as cgm
from rillet.wire.error_codes import ErrorCode

log = logging.getLogger(__name__)

TicketDecideFn = Callable[[Controller, MetadataState, int, int], Decision]
R = TypeVar("R")

# Beyond its own timeout, how long a held request waits for the coordinator's answer (which
# comes from a controller tick at worst) before it is answered NOT_COORDINATOR.
ANSWER_MARGIN_S = 30.0
_CONTROLLER_TROUBLE = (ErrorCode.NOT_CONTROLLER, ErrorCode.REQUEST_TIMED_OUT)


def _not_here(ctx: BrokerContext) -> bool:
    return not ctx.metadata.controller_is_local()


def handle_join_group(
    ctx: BrokerContext, req: cgm.ClassicJoinGroupRequest
) -> cgm.ClassicJoinGroupResponse | Deferred[cgm.ClassicJoinGroupResponse]:
    if _not_here(ctx):
        return cgm.ClassicJoinGroupResponse(ErrorCode.NOT_COORDINATOR)
    if held_by_consumer_members(ctx.metadata.state, req.group_id):
        return classic_members.join(ctx, req)
    return _join(ctx, req)


async def _join(
    ctx: BrokerContext, req: cgm.ClassicJoinGroupRequest
) -> cgm.ClassicJoinGroupResponse:
    new_member_id = f"{req.client_id or 'member'}-{uuid.uuid4()}"
    wait_s = max(req.rebalance_timeout_ms, 0) / 1000 + ANSWER_MARGIN_S
    answer: cgm.ClassicJoinGroupResponse = await _held(
        ctx,
        lambda ctl, s, now, t: ctl.classic_groups.join(s, req, t, new_member_id, now),
        wait_s,
        cgm.ClassicJoinGroupResponse,
        lambda code, msg: cgm.ClassicJoinGroupResponse(code, error_message=msg),
    )
    if answer.error_code == ErrorCode.NONE and answer.members:  # the leader's answer
        log.info(
            "classic group %s: generation %d, %d member(s), protocol %s, leader %s",
            req.group_id,
            answer.generation_id,
            len(answer.members),
            answer.protocol_name,
            answer.leader_id,
        )
    return answer


def handle_sync_group(
    ctx: BrokerContext, req: cgm.ClassicSyncGroupRequest
) -> cgm.ClassicSyncGroupResponse | Deferred[cgm.ClassicSyncGroupResponse]:
    if _not_here(ctx):
        return cgm.ClassicSyncGroupResponse(ErrorCode.NOT_COORDINATOR)
    if held_by_consumer_members(ctx.metadata.state, req.group_id):
        return classic_members.sync(ctx, req)
    group = ctx.metadata.state.classic_groups.group(req.group_id)
    rebalance_ms = group.max_rebalance_timeout_ms() if group is not None else 0
    return _held(
        ctx,
        lambda ctl, s, now, t: ctl.classic_groups.sync(s, req, t, now),
        rebalance_ms / 1000 + ANSWER_MARGIN_S,
        cgm.ClassicSyncGroupResponse,
        lambda code, msg: cgm.ClassicSyncGroupResponse(code, error_message=msg),
    )


def handle_classic_heartbeat(
    ctx: BrokerContext, req: cgm.ClassicHeartbeatRequest
) -> cgm.ClassicHeartbeatResponse | Deferred[cgm.ClassicHeartbeatResponse]:
    if _not_here(ctx):
        return cgm.ClassicHeartbeatResponse(ErrorCode.NOT_COORDINATOR)
    if held_by_consumer_members(ctx.metadata.state, req.group_id):
        return classic_members.heartbeat(ctx, req)
    return _held(
        ctx,
        lambda ctl, s, now, t: ctl.classic_groups.heartbeat(s, req, t, now),
        ANSWER_MARGIN_S,
        cgm.ClassicHeartbeatResponse,
        cgm.ClassicHeartbeatResponse,
    )


def handle_classic_leave(
    ctx: BrokerContext, req: cgm.ClassicLeaveGroupRequest
) -> cgm.ClassicLeaveGroupResponse | Deferred[cgm.ClassicLeaveGroupResponse]:
    if _not_here(ctx):
        return cgm.ClassicLeaveGroupResponse(ErrorCode.NOT_COORDINATOR)
    if held_by_consumer_members(ctx.metadata.state, req.group_id):
        return classic_members.leave(ctx, req)
    return _held(
        ctx,
        lambda ctl, s, now, t: ctl.classic_groups.leave(s, req, t, now),
        ANSWER_MARGIN_S,
        cgm.ClassicLeaveGroupResponse,
        lambda code, msg: cgm.ClassicLeaveGroupResponse(code, error_message=msg),
    )


async def _held(
    ctx: BrokerContext,
    decide: TicketDecideFn,
    wait_s: float,
    answers: type[R],
    failure: Callable[[ErrorCode, str | None], R],
) -> R:
    """The coordinator's answer to a decision that holds the request (a join waits for the
    rebalance), an ``answers``, or ``failure``'s (anything else is refused as a bug)."""
    service = ctx.metadata.controller
    if service is None:
        return failure(ErrorCode.NOT_COORDINATOR, "this node is not the controller")
    board = service.classic_answers
    ticket = board.open()
    try:
        # Shielded: a decision taken is carried through to its commit even when the client
        # goes away, so the coordinator's memory never runs ahead of the metadata log.
        with trio.CancelScope(shield=True):
            outcome = await decide_on_controller(
                ctx, lambda ctl, s, now: decide(ctl, s, now, ticket)
            )
        if outcome.error in _CONTROLLER_TROUBLE:
            return failure(ErrorCode.NOT_COORDINATOR, outcome.message)
        if outcome.error != ErrorCode.NONE:
            return failure(outcome.error, outcome.message)
        answer: object = await board.wait(ticket, wait_s)
        if answer is None:
            return failure(ErrorCode.NOT_COORDINATOR, "no answer from the coordinator in time")
        if isinstance(answer, answers):
            return answer
        raise TypeError(f"a held {answers.__name__} was answered with {answer!r}")
    finally:
        board.close(ticket)


# -- Kafka-shaped views, from this node's committed state ------------------------------------


def handle_classic_describe_groups(
    ctx: BrokerContext, req: cgm.ClassicDescribeGroupsRequest
) -> cgm.ClassicDescribeGroupsResponse:
    state = ctx.metadata.state
    return cgm.ClassicDescribeGroupsResponse([describe_group(state, gid) for gid in req.group_ids])


def describe_group(state: MetadataState, group_id: str) -> cgm.ClassicGroupDescription:
    kip848 = state.groups.group(group_id)
    classic = state.classic_groups.group(group_id)
    if kip848 is not None and (kip848.members or classic is None):
        members = [
            cgm.ClassicDescribedMember(
                mid, m.member.instance_id, m.member.client_id, m.member.client_host, b"", b""
            )
            for mid, m in sorted(kip848.members.items())
        ]
        phase = cgm.STABLE if members else cgm.EMPTY
        return cgm.ClassicGroupDescription(
            ErrorCode.NONE, group_id, phase, cgm.CONSUMER_PROTOCOL_TYPE, kip848.assignor, members
        )
    if classic is not None:
        described = [
            cgm.ClassicDescribedMember(
                mid,
                m.member.group_instance_id,
                m.member.client_id,
                m.member.client_host,
                m.member.metadata_for(classic.protocol_name),
                m.assignment,
            )
            for mid, m in sorted(classic.members.items())
        ]
        return cgm.ClassicGroupDescription(
            ErrorCode.NONE,
            group_id,
            classic.phase,
            classic.protocol_type,
            classic.protocol_name or "",
            described,
        )
    if group_id in state.groups.offsets:
        return cgm.ClassicGroupDescription(ErrorCode.NONE, group_id, cgm.EMPTY, "", "")
    return cgm.ClassicGroupDescription(ErrorCode.NONE, group_id, cgm.DEAD, "", "")


def handle_classic_list_groups(
    ctx: BrokerContext, req: cgm.ClassicListGroupsRequest
) -> cgm.ClassicListGroupsResponse:
    state = ctx.metadata.state
    wanted = {s.lower() for s in req.states_filter}
    ids = set(state.groups.groups) | set(state.groups.offsets) | set(state.classic_groups.groups)
    listed = []
    for gid in sorted(ids):
        d = describe_group(state, gid)
        if not wanted or d.group_state.lower() in wanted:
            listed.append(cgm.ClassicListedGroup(gid, d.protocol_type, d.group_state))
    return cgm.ClassicListGroupsResponse(ErrorCode.NONE, listed)
