"""Metadata: brokers, topics and partition leadership as this node knows them."""

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
    cfg = ctx.config
    node = cfg.node_id
    registry = ctx.replicas.registry
    names = [t.name for t in registry.all()] if req.topics is None else req.topics
    topics = []
    for name in names:
        info = registry.get(name)
        if info is None:
            topics.append(TopicMetadata(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, []))
            continue
        partitions = []
        for p in range(info.num_partitions):
            replica = ctx.replicas.get(name, p)
            epoch = replica.leader_epoch if replica is not None else 0
            partitions.append(PartitionMetadata(p, node, epoch, [node], [node]))
        topics.append(TopicMetadata(name, ErrorCode.NONE, partitions, dict(info.configs)))
    brokers = [BrokerInfo(node, cfg.advertised_host, ctx.advertised_port, cfg.rack)]
    return MetadataResponse(cfg.cluster_id, node, brokers, topics)
