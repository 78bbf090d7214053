"""Metadata: brokers, topics and partition leadership from the committed metadata state."""

from __future__ import annotations

from rillet.broker.handlers.context import BrokerContext
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import (
    BrokerInfo,
    MetadataRequest,
    MetadataResponse,
    PartitionMetadata,
    TopicMetadata,
)


def handle_metadata(ctx: BrokerContext, req: MetadataRequest) -> MetadataResponse:
    state = ctx.metadata.state
    names = sorted(state.topic_ids) if req.topics is None else req.topics
    topics = []
    for name in names:
        topic = state.topic_by_name(name)
        if topic is None:
            topics.append(TopicMetadata(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, []))
            continue
        partitions = []
        for p, s in sorted(state.partitions_of(topic.topic_id).items()):
            error = ErrorCode.NONE if s.leader >= 0 else ErrorCode.LEADER_NOT_AVAILABLE
            partitions.append(
                PartitionMetadata(p, s.leader, s.leader_epoch, list(s.replicas), list(s.isr), error)
            )
        topics.append(TopicMetadata(name, ErrorCode.NONE, partitions, dict(topic.configs)))
    brokers = [
        BrokerInfo(b.broker_id, b.host, b.port, b.rack)
        for b in sorted(state.brokers.values(), key=lambda b: b.broker_id)
        if not b.fenced
    ]
    return MetadataResponse(ctx.config.cluster_id, ctx.metadata.controller_id(), brokers, topics)
