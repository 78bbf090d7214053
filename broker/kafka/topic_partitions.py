"""DescribeTopicPartitions (75): topics and their partitions a page at a time.

Kafka 4's admin client (``kafka-topics --describe``) asks with this api rather than
Metadata: topics in name order, at most ``response_partition_limit`` partitions per answer
(and never more than Kafka's ``max.request.partition.size.limit``, 2000), and a
``next_cursor`` naming the topic and partition the next page starts at. The node is asked
for the topics' metadata as for Metadata (so ACLs filter them the same way) and the page
is cut here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection

from rillet.broker.kafka import shapes
from rillet.broker.kafka.admin import topic_entry
from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.translation import ClusterView, Forward, KafkaResponse
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import MetadataRequest, MetadataResponse, TopicMetadata

# Kafka's max.request.partition.size.limit default: the most partitions one answer holds.
MAX_PARTITIONS_PER_ANSWER = 2000


def page(
    topics: list[TopicMetadata], cursor: tuple[str, int] | None, limit: int
) -> tuple[list[TopicMetadata], tuple[str, int] | None]:
    """The topics (each with the partitions that fit) of the page starting at ``cursor``,
    and the cursor of the next page (None: this was the last)."""
    out: list[TopicMetadata] = []
    room = max(1, min(limit, MAX_PARTITIONS_PER_ANSWER))
    ordered = sorted(topics, key=lambda t: t.name)
    if cursor is not None:
        ordered = [t for t in ordered if t.name >= cursor[0]]
    for topic in ordered:
        if topic.error_code != ErrorCode.NONE:
            out.append(topic)
            continue
        if room == 0:
            return out, (topic.name, 0)
        first = cursor[1] if cursor is not None and topic.name == cursor[0] else 0
        partitions = sorted(
            (p for p in topic.partitions if p.partition >= first), key=lambda p: p.partition
        )
        taken = partitions[:room]
        room -= len(taken)
        out.append(dataclasses.replace(topic, partitions=taken))
        if len(taken) < len(partitions):
            return out, (topic.name, partitions[len(taken)].partition)
    return out, None


def _topic_entry(
    t: TopicMetadata, endpoints: Collection[int]
) -> shapes.DescribeTopicPartitionsResponseTopicShape:
    """Metadata's description of a topic, with no eligible leader replicas (KIP-966)."""
    entry = topic_entry(t, endpoints)
    return {
        **entry,
        "partitions": [
            {**p, "eligible_leader_replicas": (), "last_known_elr": ()}
            for p in entry.get("partitions", ())
        ],
    }


def translate_describe_topic_partitions(
    schema: ApiSchema, req: shapes.DescribeTopicPartitionsRequests, view: ClusterView
) -> Forward[MetadataResponse]:
    names = sorted({str(t.name) for t in req.topics})
    cursor = None
    if req.cursor is not None:
        cursor = (str(req.cursor.topic_name), int(req.cursor.partition_index))

    def respond(topics: list[TopicMetadata], next_cursor: tuple[str, int] | None) -> KafkaResponse:
        endpoints = view.kafka_endpoints()
        return build(
            schema.response_type,
            {
                "topics": [_topic_entry(t, endpoints) for t in topics],
                "next_cursor": (
                    None
                    if next_cursor is None
                    else {"topic_name": next_cursor[0], "partition_index": next_cursor[1]}
                ),
            },
        )

    def reply(resp: MetadataResponse) -> KafkaResponse:
        return respond(*page(resp.topics, cursor, int(req.response_partition_limit)))

    def fail(code: int) -> KafkaResponse:
        return respond([TopicMetadata(name, code, []) for name in names], None)

    return Forward(MetadataRequest(names or None, -1, False), reply, fail)
