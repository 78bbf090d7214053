"""DeleteRecords: Kafka's request to move log starts forward, on the native api.

Kafka clients send it to each partition's leader, as rillet's own client does; the answer
per partition is the new low watermark or the error (OFFSET_OUT_OF_RANGE above the high
watermark, NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT before every in-sync replica had it).
"""

from __future__ import annotations

from rillet.broker.kafka import shapes
from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.data_path import grouped_by_topic, partition_pairs
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.translation import Forward, KafkaResponse, millis
from rillet.wire.record_deletion_messages import (
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
)


def translate_delete_records(
    schema: ApiSchema, req: shapes.DeleteRecordsRequests
) -> Forward[DeleteRecordsResponse]:
    pairs = partition_pairs(req.topics)
    native = DeleteRecordsRequest(
        [
            DeleteRecordsPartition(str(t.name), int(p.partition_index), int(p.offset))
            for t in req.topics
            for p in t.partitions
        ],
        millis(req.timeout),
    )

    def respond(entries: list[shapes.DeleteRecordsPartitionResultShape]) -> KafkaResponse:
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "topics": [
                    {"name": topic, "partitions": items}
                    for topic, items in grouped_by_topic(pairs, entries)
                ],
            },
        )

    def reply(resp: DeleteRecordsResponse) -> KafkaResponse:
        return respond(
            [
                {
                    "partition_index": r.partition,
                    "low_watermark": r.low_watermark,
                    "error_code": r.error_code,
                }
                for r in resp.partitions
            ]
        )

    def fail(code: int) -> KafkaResponse:
        return respond(
            [{"partition_index": p, "low_watermark": -1, "error_code": code} for _, p in pairs]
        )

    return Forward(native, reply, fail)
