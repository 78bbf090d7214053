"""OffsetForLeaderEpoch v2-3 onto the internal request of the same name."""

from __future__ import annotations

from typing import TypeAlias

from rillet.broker.kafka import shapes
from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.translation import Forward, KafkaResponse
from rillet.wire.leader_epoch_messages import (
    EpochQuery,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
)

Entry: TypeAlias = "shapes.OffsetForLeaderEpochEpochEndOffsetShape"


def translate_offset_for_leader_epoch(
    schema: ApiSchema, req: shapes.OffsetForLeaderEpochRequests
) -> Forward[OffsetForLeaderEpochResponse]:
    # replica_id (v3) is ignored: a Kafka client is always a consumer here.
    queries = [
        EpochQuery(str(t.topic), int(p.partition), int(p.leader_epoch), int(p.current_leader_epoch))
        for t in req.topics
        for p in t.partitions
    ]

    def respond(entries: list[tuple[str, Entry]]) -> KafkaResponse:
        topics: dict[str, list[Entry]] = {}
        for topic, entry in entries:
            topics.setdefault(topic, []).append(entry)
        return build(
            schema.response_type,
            {"topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()]},
        )

    def reply(resp: OffsetForLeaderEpochResponse) -> KafkaResponse:
        return respond(
            [
                (
                    r.topic,
                    {
                        "error_code": r.error_code,
                        "partition": r.partition,
                        "leader_epoch": r.leader_epoch,
                        "end_offset": r.end_offset,
                    },
                )
                for r in resp.partitions
            ]
        )

    def fail(code: int) -> KafkaResponse:
        return respond(
            [
                (
                    q.topic,
                    {
                        "error_code": code,
                        "partition": q.partition,
                        "leader_epoch": -1,
                        "end_offset": -1,
                    },
                )
                for q in queries
            ]
        )

    return Forward(OffsetForLeaderEpochRequest(queries), reply, fail)
