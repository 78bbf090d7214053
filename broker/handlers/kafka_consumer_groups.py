"""Kafka's ConsumerGroupHeartbeat (KIP-848) on the group coordinator (docs/consumer-groups.md).

The Kafka listener sends it as rillet's heartbeat with ``member_epoch`` set; this module is
that path of ``handle_heartbeat``: epochs -1 and -2 leave, any other is checked and turned
into a coordinator heartbeat by ``metadata_quorum.consumer_protocol`` on the controller, and
the answer gives the member's epoch (the generation it is told) and what it owns now.
"""

from __future__ import annotations

import dataclasses
import uuid

from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.controller_calls import decide_on_controller
from rillet.metadata_quorum.classic_group_offsets import held_by_classic_members
from rillet.metadata_quorum.consumer_protocol import (
    LEAVE_EPOCH,
    STATIC_LEAVE_EPOCH,
    kafka_heartbeat,
)
from rillet.metadata_quorum.controller import Controller
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.group_registry import TopicPartitionId
from rillet.metadata_quorum.state import MetadataState
from rillet.wire import group_messages as gm
from rillet.wire.error_codes import ErrorCode


async def heartbeat_kafka_member(
    ctx: BrokerContext, req: gm.ConsumerGroupHeartbeatRequest
) -> gm.ConsumerGroupHeartbeatResponse:
    epoch = req.member_epoch
    if epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
        outcome = await decide_on_controller(
            ctx, lambda ctl, s, now: ctl.groups.leave(s, req.group_id, req.member_id)
        )
        return gm.ConsumerGroupHeartbeatResponse(
            outcome.group_error, req.member_id, epoch or 0, error_message=outcome.message
        )
    # Kafka 4.x members make their own id (a UUID); older ones ask for one with "".
    req = dataclasses.replace(req, member_id=req.member_id or uuid.uuid4().hex)
    limits = ctx.config.groups.consumer()

    def decide(ctl: Controller, s: MetadataState, now: int) -> Decision:
        if held_by_classic_members(s, req.group_id):
            code = ErrorCode.GROUP_ID_NOT_FOUND
            return Decision([], code, f"group {req.group_id} is not a consumer group")
        hb = kafka_heartbeat(s, req, limits)
        return hb if isinstance(hb, Decision) else ctl.groups.heartbeat(s, hb, now)

    outcome = await decide_on_controller(ctx, decide)
    if outcome.error != ErrorCode.NONE:
        return gm.ConsumerGroupHeartbeatResponse(outcome.group_error, error_message=outcome.message)
    state = ctx.metadata.state
    group = state.groups.group(req.group_id)
    member = group.members.get(req.member_id) if group is not None else None
    if group is None or member is None:
        return gm.ConsumerGroupHeartbeatResponse(ErrorCode.UNKNOWN_MEMBER_ID)
    target = group.target.get(req.member_id, frozenset())
    assigned = member.owned & target
    cfg = ctx.config.groups
    converging = assigned != target or member.owned != target
    interval = cfg.converging_heartbeat_interval_ms if converging else cfg.heartbeat_interval_ms
    return gm.ConsumerGroupHeartbeatResponse(
        ErrorCode.NONE,
        req.member_id,
        member.generation,
        interval,
        named_partitions(state, assigned),
    )


def named_partitions(
    state: MetadataState, parts: frozenset[TopicPartitionId]
) -> list[gm.GroupTopicPartitions]:
    """``parts`` grouped per topic, each named by its name and its topic id."""
    by_topic: dict[tuple[str, str], list[int]] = {}
    for topic_id, p in sorted(parts):
        topic = state.topics.get(topic_id)
        if topic is not None:
            by_topic.setdefault((topic.name, topic_id), []).append(p)
    return [gm.GroupTopicPartitions(t, ps, tid) for (t, tid), ps in sorted(by_topic.items())]
