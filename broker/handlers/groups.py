"""Consumer-group apis (docs/consumer-groups.md). The coordinator is the controller:
FindCoordinator names it, and the other group requests answer NOT_COORDINATOR anywhere
else, so clients follow it when the Raft leadership moves. Decisions go through the
controller and are committed to the metadata log before the answer leaves; reads (offsets,
descriptions) come from the committed state of the node asked.
"""

from __future__ import annotations

import uuid

from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.controller_calls import decide_on_controller
from rillet.broker.handlers.deferred import Deferred
from rillet.broker.handlers.kafka_consumer_groups import (
    heartbeat_kafka_member,
)
from rillet.broker.handlers.kafka_consumer_groups import (
    named_partitions as _names,
)
from rillet.broker.handlers.refused import Refused
from rillet.metadata_quorum.classic_group_offsets import (
    commit_classic_offsets,
    held_by_classic_members,
    is_classic_group,
)
from rillet.metadata_quorum.classic_group_registry import ClassicGroupState
from rillet.metadata_quorum.controller import Controller
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.group_coordinator import MemberHeartbeat, member_assignment
from rillet.metadata_quorum.group_registry import TopicPartitionId
from rillet.metadata_quorum.state import MetadataState
from rillet.wire import group_messages as gm
from rillet.wire.error_codes import ErrorCode


def handle_find_coordinator(
    ctx: BrokerContext, req: gm.FindCoordinatorRequest
) -> gm.FindCoordinatorResponse:
    controller_id = ctx.metadata.controller_id()
    broker = ctx.metadata.state.brokers.get(controller_id)
    if broker is None:
        return gm.FindCoordinatorResponse(
            ErrorCode.COORDINATOR_NOT_AVAILABLE, error_message="no controller known yet"
        )
    return gm.FindCoordinatorResponse(ErrorCode.NONE, controller_id, broker.host, broker.port)


def _not_here(ctx: BrokerContext) -> bool:
    return not ctx.metadata.controller_is_local()


def handle_heartbeat(
    ctx: BrokerContext, req: gm.ConsumerGroupHeartbeatRequest
) -> gm.ConsumerGroupHeartbeatResponse | Deferred[gm.ConsumerGroupHeartbeatResponse]:
    if _not_here(ctx):
        return gm.ConsumerGroupHeartbeatResponse(ErrorCode.NOT_COORDINATOR)
    if req.member_epoch is not None:  # Kafka's ConsumerGroupHeartbeat
        return heartbeat_kafka_member(ctx, req)
    return _heartbeat(ctx, req)


async def _heartbeat(
    ctx: BrokerContext, req: gm.ConsumerGroupHeartbeatRequest
) -> gm.ConsumerGroupHeartbeatResponse:
    # Joining: no partitions owned yet. rillet's consumer sends an id of its own; an empty
    # one (older clients) gets one made here.
    joining = req.owned is None or not req.member_id
    member_id = req.member_id or uuid.uuid4().hex
    state = ctx.metadata.state
    owned = None if req.owned is None else _ids(state, req.owned)
    hb = MemberHeartbeat(
        req.group_id,
        member_id,
        joining,
        "",
        req.client_host,
        tuple(req.topics),
        req.pattern,
        req.session_timeout_ms,
        req.assignor,
        req.instance_id,
        owned,
    )

    def decide(ctl: Controller, s: MetadataState, now: int) -> Decision:
        if held_by_classic_members(s, req.group_id):
            code = ErrorCode.GROUP_ID_NOT_FOUND
            return Decision([], code, "the group uses the classic (JoinGroup) protocol")
        return ctl.groups.heartbeat(s, hb, now)

    outcome = await decide_on_controller(ctx, decide)
    if outcome.error != ErrorCode.NONE:
        code = (
            ErrorCode.NOT_COORDINATOR
            if outcome.error == ErrorCode.NOT_CONTROLLER
            else outcome.error
        )
        return gm.ConsumerGroupHeartbeatResponse(code, error_message=outcome.message)
    state = ctx.metadata.state
    answer = member_assignment(state, req.group_id, member_id)
    if answer is None:
        return gm.ConsumerGroupHeartbeatResponse(ErrorCode.UNKNOWN_MEMBER_ID)
    cfg = ctx.config.groups
    interval = (
        cfg.converging_heartbeat_interval_ms if answer.converging else cfg.heartbeat_interval_ms
    )
    return gm.ConsumerGroupHeartbeatResponse(
        ErrorCode.NONE, member_id, answer.generation, interval, _names(state, answer.assigned)
    )


def handle_leave(
    ctx: BrokerContext, req: gm.LeaveGroupRequest
) -> gm.LeaveGroupResponse | Deferred[gm.LeaveGroupResponse]:
    if _not_here(ctx):
        return gm.LeaveGroupResponse(ErrorCode.NOT_COORDINATOR)
    return _leave(ctx, req)


async def _leave(ctx: BrokerContext, req: gm.LeaveGroupRequest) -> gm.LeaveGroupResponse:
    outcome = await decide_on_controller(
        ctx, lambda ctl, s, now: ctl.groups.leave(s, req.group_id, req.member_id)
    )
    code = ErrorCode.NOT_COORDINATOR if outcome.error == ErrorCode.NOT_CONTROLLER else outcome.error
    return gm.LeaveGroupResponse(code, outcome.message)


def handle_offset_commit(
    ctx: BrokerContext, req: gm.OffsetCommitRequest
) -> gm.OffsetCommitResponse | Deferred[gm.OffsetCommitResponse]:
    if _not_here(ctx):
        return gm.OffsetCommitResponse(ErrorCode.NOT_COORDINATOR)
    return _offset_commit(ctx, req)


async def _offset_commit(
    ctx: BrokerContext, req: gm.OffsetCommitRequest
) -> gm.OffsetCommitResponse:
    errors: dict[tuple[str, int], ErrorCode] = {}
    offsets = [(o.topic, o.partition, o.offset, o.metadata) for o in req.offsets]
    epochs = {(o.topic, o.partition): o.leader_epoch for o in req.offsets if o.leader_epoch >= 0}

    def decide(ctl: Controller, s: MetadataState, now: int) -> Decision:
        if is_classic_group(s, req.group_id):
            return commit_classic_offsets(
                s,
                req.group_id,
                req.member_id,
                req.group_instance_id,
                req.generation,
                offsets,
                now,
                errors,
                epochs,
            )
        return ctl.groups.commit_offsets(
            s, req.group_id, req.member_id, req.generation, offsets, now, errors, epochs
        )

    outcome = await decide_on_controller(ctx, decide, commuting=True)
    if outcome.error != ErrorCode.NONE:
        code = (
            ErrorCode.NOT_COORDINATOR
            if outcome.error == ErrorCode.NOT_CONTROLLER
            else outcome.error
        )
        return gm.OffsetCommitResponse(code, error_message=outcome.message)
    return gm.OffsetCommitResponse(
        ErrorCode.NONE,
        [
            gm.PartitionError(
                o.topic, o.partition, errors.get((o.topic, o.partition), ErrorCode.NONE)
            )
            for o in req.offsets
        ],
    )


def handle_offset_fetch(
    ctx: BrokerContext, req: gm.OffsetFetchRequest
) -> gm.OffsetFetchResponse | Refused:
    """The committed offsets as applied here; refused (COORDINATOR_LOAD_IN_PROGRESS, as
    Kafka's coordinator while it loads a group) until this node has caught up since its
    start: "nothing committed" from a node that has not applied the commits yet would reset
    a consumer's positions."""
    not_ready = ctx.metadata.not_ready()
    if not_ready is not None:
        return Refused(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, not_ready.reason)
    state = ctx.metadata.state
    more = [
        gm.GroupOffsets(g.group_id, ErrorCode.NONE, _committed(state, g.group_id, g.partitions))
        for g in req.more_groups
    ]
    offsets = _committed(state, req.group_id, req.partitions)
    return gm.OffsetFetchResponse(ErrorCode.NONE, offsets, more_groups=more)


def _committed(
    state: MetadataState, group_id: str, partitions: list[gm.GroupTopicPartitions] | None
) -> list[gm.FetchedOffset]:
    """A group's committed offsets of ``partitions`` (None: of every partition it has one
    for), -1 where none is."""
    table = state.groups.offsets.get(group_id, {})
    names = {tid: t.name for tid, t in state.topics.items()}
    if partitions is None:
        wanted = sorted((names[t], p) for t, p in table if t in names)
    else:
        wanted = [(tp.topic, p) for tp in partitions for p in tp.partitions]
    out = []
    for topic, partition in wanted:
        topic_id = state.topic_ids.get(topic)
        entry = table.get((topic_id, partition)) if topic_id is not None else None
        if entry is None:
            out.append(gm.FetchedOffset(topic, partition, -1))
        else:
            out.append(
                gm.FetchedOffset(
                    topic,
                    partition,
                    entry.offset,
                    entry.metadata,
                    entry.commit_time_ms,
                    entry.leader_epoch,
                )
            )
    return out


def handle_list_groups(ctx: BrokerContext, req: gm.ListGroupsRequest) -> gm.ListGroupsResponse:
    registry = ctx.metadata.state.groups
    classic = ctx.metadata.state.classic_groups.groups
    ids = sorted(set(registry.groups) | set(registry.offsets) | set(classic))
    listings = []
    for gid in ids:
        group = registry.groups.get(gid)
        c = classic.get(gid)
        if c is not None and (group is None or not group.members):  # a classic group
            listings.append(gm.GroupListing(gid, len(c.members), c.generation))
            continue
        members = len(group.members) if group is not None else 0
        listings.append(gm.GroupListing(gid, members, group.generation if group else 0))
    return gm.ListGroupsResponse(ErrorCode.NONE, listings)


def handle_describe_groups(
    ctx: BrokerContext, req: gm.DescribeGroupsRequest
) -> gm.DescribeGroupsResponse:
    state = ctx.metadata.state
    out = []
    for gid in req.group_ids:
        group = state.groups.groups.get(gid)
        classic = state.classic_groups.group(gid)
        if classic is not None and (group is None or not group.members):
            out.append(_describe_classic(classic))
            continue
        if group is None:
            known = gid in state.groups.offsets
            code = ErrorCode.NONE if known else ErrorCode.GROUP_ID_NOT_FOUND
            out.append(gm.GroupDescription(gid, code))
            continue
        members = [
            gm.MemberDescription(
                mid,
                m.member.instance_id,
                m.member.client_host,
                list(m.member.topics),
                m.member.pattern,
                _names(state, m.owned),
                _names(state, group.target.get(mid, frozenset())),
                m.generation,
                m.member.client_id,
                m.member.classic_protocol,
            )
            for mid, m in sorted(group.members.items())
        ]
        out.append(
            gm.GroupDescription(gid, ErrorCode.NONE, group.generation, group.assignor, members)
        )
    return gm.DescribeGroupsResponse(out)


def _describe_classic(group: ClassicGroupState) -> gm.GroupDescription:
    """A classic group: its members and the protocol its leader assigns with (assignments are
    the leader's opaque bytes, so no partitions are listed)."""
    members = [
        gm.MemberDescription(
            mid, m.member.group_instance_id, m.member.client_host, [], None, [], []
        )
        for mid, m in sorted(group.members.items())
    ]
    return gm.GroupDescription(
        group.group_id,
        ErrorCode.NONE,
        group.generation,
        group.protocol_name or "",
        members,
        classic=True,
    )


def _ids(state: MetadataState, parts: list[gm.GroupTopicPartitions]) -> frozenset[TopicPartitionId]:
    out: set[TopicPartitionId] = set()
    for tp in parts:
        topic_id = state.topic_ids.get(tp.topic)
        if topic_id is not None:
            out.update((topic_id, p) for p in tp.partitions)
    return frozenset(out)
