"""Produce, Fetch and ListOffsets: Kafka's nested topic/partition lists to rillet's flat ones.

Internal answers come back in request order, one per partition, so regrouping walks the
Kafka request again and takes answers in turn.
"""

from __future__ import annotations

from typing import Any

from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.fetch_response import FetchedPartition, encode_fetch_body
from rillet.broker.kafka.translation import Answer, Forward, RawBody, millis
from rillet.wire.messages import (
    FetchPartition,
    FetchRequest,
    FetchResponse,
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ProducePartitionData,
    ProduceRequest,
    ProduceResponse,
)

TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53


def partition_pairs(
    request_topics: Any, partitions_field: str, index_field: str
) -> list[tuple[str, int]]:
    return [
        (t_name, getattr(p, index_field))
        for t_name, t in ((_topic_name(t), t) for t in request_topics)
        for p in getattr(t, partitions_field)
    ]


def _topic_name(topic: Any) -> str:
    return str(topic.name if hasattr(topic, "name") else topic.topic)


def grouped_by_topic(pairs: list[tuple[str, int]], items: list[Any]) -> list[tuple[str, list[Any]]]:
    """Consecutive entries of one topic under one heading, in request order."""
    out: list[tuple[str, list[Any]]] = []
    for (topic, _), item in zip(pairs, items, strict=True):
        if out and out[-1][0] == topic:
            out[-1][1].append(item)
        else:
            out.append((topic, [item]))
    return out


# -- Produce -----------------------------------------------------------------------------------


def translate_produce(schema: ApiSchema, req: Any) -> Forward | Answer:
    pairs = partition_pairs(req.topic_data, "partition_data", "index")

    def respond(codes: list[dict[str, Any]]) -> Any:
        return build(
            schema.response_type,
            {
                "responses": [
                    {"name": topic, "partition_responses": entries}
                    for topic, entries in grouped_by_topic(pairs, codes)
                ],
                "throttle_time": 0,
            },
        )

    def fail(code: int) -> Any:
        return respond([{"index": p, "error_code": code, "base_offset": -1} for _, p in pairs])

    if req.transactional_id is not None:
        return Answer(fail(TRANSACTIONAL_ID_AUTHORIZATION_FAILED))
    acks = int(req.acks)
    native = ProduceRequest(
        acks,  # acks=0: no answer; a failed partition closes the connection (Forward)
        millis(req.timeout),
        [
            ProducePartitionData(_topic_name(t), int(p.index), bytes(p.records or b""))
            for t in req.topic_data
            for p in t.partition_data
        ],
    )

    def reply(resp: ProduceResponse) -> Any:
        return respond(
            [
                {
                    "index": r.partition,
                    "error_code": r.error_code,
                    "base_offset": r.base_offset,
                    "log_append_time": r.log_append_time_ms,
                    "log_start_offset": r.log_start_offset,
                }
                for r in resp.partitions
            ]
        )

    return Forward(native, reply, fail, unanswered=acks == 0)


# -- Fetch -------------------------------------------------------------------------------------


def translate_fetch(schema: ApiSchema, req: Any) -> Forward:
    pairs = partition_pairs(req.topics, "partitions", "partition")
    version = schema.version
    native = FetchRequest(
        millis(req.max_wait),
        int(req.min_bytes),
        int(req.max_bytes),
        [
            FetchPartition(
                _topic_name(t),
                int(p.partition),
                int(p.fetch_offset),
                int(p.partition_max_bytes),
                int(getattr(p, "current_leader_epoch", -1)),
            )
            for t in req.topics
            for p in t.partitions
        ],
        # replica_id stays -1: a Kafka client is always a consumer, never a follower.
    )

    def reply(resp: FetchResponse) -> RawBody:
        fetched = [
            FetchedPartition(
                r.partition, r.error_code, r.high_watermark, r.log_start_offset, r.records
            )
            for r in resp.partitions
        ]
        return RawBody(encode_fetch_body(version, grouped_by_topic(pairs, fetched)))

    def fail(code: int) -> RawBody:
        fetched = [FetchedPartition(p, code, -1, -1, b"") for _, p in pairs]
        return RawBody(encode_fetch_body(version, grouped_by_topic(pairs, fetched)))

    return Forward(native, reply, fail)


# -- ListOffsets -------------------------------------------------------------------------------


def translate_list_offsets(schema: ApiSchema, req: Any) -> Forward:
    pairs = partition_pairs(req.topics, "partitions", "partition_index")
    native = ListOffsetsRequest(
        [
            ListOffsetsPartition(_topic_name(t), int(p.partition_index), int(p.timestamp))
            for t in req.topics
            for p in t.partitions
        ]
    )

    def respond(entries: list[dict[str, Any]]) -> Any:
        return build(
            schema.response_type,
            {
                "topics": [
                    {"name": topic, "partitions": items}
                    for topic, items in grouped_by_topic(pairs, entries)
                ],
                "throttle_time": 0,
            },
        )

    def reply(resp: ListOffsetsResponse) -> Any:
        return respond(
            [
                {
                    "partition_index": r.partition,
                    "error_code": r.error_code,
                    "timestamp": r.timestamp_ms,
                    "offset": r.offset,
                }
                for r in resp.partitions
            ]
        )

    def fail(code: int) -> Any:
        return respond(
            [
                {"partition_index": p, "error_code": code, "timestamp": -1, "offset": -1}
                for _, p in pairs
            ]
        )

    return Forward(native, reply, fail)
