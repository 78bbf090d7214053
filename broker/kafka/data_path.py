"""Produce, Fetch and ListOffsets: Kafka's nested topic/partition lists to rillet's flat ones.

Internal answers come back in request order, one per partition, so regrouping walks the
Kafka request again and takes answers in turn.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar

from rillet.broker.handlers.fetch_sessions import (
    FINAL_EPOCH,
    INVALID_SESSION_ID,
    PartitionAnswer,
    Position,
    SessionRefusal,
)
from rillet.broker.kafka import shapes
from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.fetch_response import FetchedPartition, encode_fetch_body
from rillet.broker.kafka.translation import (
    Answer,
    ClusterView,
    Forward,
    KafkaResponse,
    RawBody,
    field_or,
    millis,
)
from rillet.wire.frame import blob_length
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

T = TypeVar("T")


def partition_pairs(topics: Iterable[_NamedTopic]) -> list[tuple[str, int]]:
    """Each (topic, partition) a request names, in request order."""
    return [(str(t.name), int(p.partition_index)) for t in topics for p in t.partitions]


class _NamedPartition(Protocol):
    @property
    def partition_index(self) -> int: ...


class _NamedTopic(Protocol):
    """A topic and its partitions, as ListOffsets, DeleteRecords and others name them."""

    @property
    def name(self) -> str: ...

    @property
    def partitions(self) -> Sequence[_NamedPartition]: ...


def grouped_by_topic(pairs: list[tuple[str, int]], items: list[T]) -> list[tuple[str, list[T]]]:
    """Consecutive entries of one topic under one heading, in request order."""
    out: list[tuple[str, list[T]]] = []
    for (topic, _), item in zip(pairs, items, strict=True):
        if out and out[-1][0] == topic:
            out[-1][1].append(item)
        else:
            out.append((topic, [item]))
    return out


# -- Produce -----------------------------------------------------------------------------------


def translate_produce(
    schema: ApiSchema, req: shapes.ProduceRequests
) -> Forward[ProduceResponse] | Answer:
    pairs = [(str(t.name), int(p.index)) for t in req.topic_data for p in t.partition_data]

    def respond(codes: list[shapes.ProducePartitionProduceResponseShape]) -> KafkaResponse:
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

    def fail(code: int) -> KafkaResponse:
        return respond(
            [
                {"index": p, "error_code": code, "base_offset": -1, "record_errors": ()}
                for _, p in pairs
            ]
        )

    acks = int(req.acks)
    native = ProduceRequest(
        acks,  # acks=0: no answer; a failed partition closes the connection (Forward)
        millis(req.timeout),
        [
            ProducePartitionData(str(t.name), int(p.index), bytes(p.records or b""))
            for t in req.topic_data
            for p in t.partition_data
        ],
        None if req.transactional_id is None else str(req.transactional_id),
    )

    def reply(resp: ProduceResponse) -> KafkaResponse:
        return respond(
            [
                {
                    "index": r.partition,
                    "error_code": r.error_code,
                    "base_offset": r.base_offset,
                    "log_append_time": r.log_append_time_ms,
                    "log_start_offset": r.log_start_offset,
                    # v8+: why a partition was refused (INVALID_TIMESTAMP names the batch,
                    # its timestamp and the limit), as Kafka's error_message.
                    "error_message": r.error_message if r.error_code else None,
                    # v8+: the records that made it INVALID_RECORD; librdkafka fails only
                    # those and the rest of the batch with _INVALID_DIFFERENT_RECORD.
                    "record_errors": [
                        {"batch_index": i, "batch_index_error_message": r.error_message}
                        for i in r.invalid_records
                    ],
                }
                for r in resp.partitions
            ]
        )

    return Forward(native, reply, fail, unanswered=acks == 0)


class _ForgottenTopic(Protocol):
    """A topic a fetch session's client no longer wants some partitions of (v7+)."""

    @property
    def topic(self) -> str: ...

    @property
    def partitions(self) -> Sequence[int]: ...


# -- Fetch -------------------------------------------------------------------------------------


def translate_fetch(
    schema: ApiSchema, req: shapes.FetchRequests, view: ClusterView
) -> Forward[FetchResponse] | Answer:
    """A Kafka fetch, within its fetch session if it names one (broker/handlers/fetch_sessions.py):
    the node reads every partition of the session, and the answer keeps those the client
    needs. Versions before 7 have no sessions."""
    version = schema.version
    named = {
        (str(t.topic), int(p.partition)): Position(
            int(p.fetch_offset), int(p.partition_max_bytes), field_or(p, "current_leader_epoch", -1)
        )
        for t in req.topics
        for p in t.partitions
    }
    none_forgotten: tuple[_ForgottenTopic, ...] = ()  # (versions before 7 have no sessions)
    forgotten = [
        (str(t.topic), int(p))
        for t in field_or(req, "forgotten_topics_data", none_forgotten)
        for p in t.partitions
    ]
    session_id = field_or(req, "session_id", INVALID_SESSION_ID)
    epoch = field_or(req, "session_epoch", FINAL_EPOCH)
    context = view.fetch_sessions().new_context(session_id, epoch, named, forgotten, view.now_ms())
    if isinstance(context, SessionRefusal):
        return Answer(RawBody(encode_fetch_body(version, [], context.error_code)))
    native = FetchRequest(
        millis(req.max_wait),
        int(req.min_bytes),
        int(req.max_bytes),
        [
            FetchPartition(
                topic, partition, p.fetch_offset, p.partition_max_bytes, p.current_leader_epoch
            )
            for (topic, partition), p in context.partitions
        ],
        # replica_id stays -1: a Kafka client is always a consumer, never a follower.
        isolation_level=int(req.isolation_level),
    )

    def answered(resp_parts: list[FetchedPartition]) -> RawBody:
        answers = [
            PartitionAnswer(
                p.error_code,
                p.high_watermark,
                p.high_watermark if p.last_stable_offset < 0 else p.last_stable_offset,
                p.log_start_offset,
                blob_length(p.records),
            )
            for p in resp_parts
        ]
        by_key = {key: p for (key, _), p in zip(context.partitions, resp_parts, strict=True)}
        session, kept = context.answer(answers, view.now_ms())
        pairs = [key for key, _ in kept]
        topics = grouped_by_topic(pairs, [by_key[key] for key in pairs])
        return RawBody(encode_fetch_body(version, topics, session_id=session))

    def reply(resp: FetchResponse) -> RawBody:
        return answered(
            [
                FetchedPartition(
                    r.partition,
                    r.error_code,
                    r.high_watermark,
                    r.log_start_offset,
                    r.records,
                    r.last_stable_offset,
                    [(a.producer_id, a.first_offset) for a in r.aborted_transactions],
                )
                for r in resp.partitions
            ]
        )

    def fail(code: int) -> RawBody:
        return answered(
            [FetchedPartition(p, code, -1, -1, b"") for (_, p), _ in context.partitions]
        )

    return Forward(native, reply, fail)


# -- ListOffsets -------------------------------------------------------------------------------


def translate_list_offsets(
    schema: ApiSchema, req: shapes.ListOffsetsRequests
) -> Forward[ListOffsetsResponse]:
    pairs = partition_pairs(req.topics)
    native = ListOffsetsRequest(
        [
            ListOffsetsPartition(str(t.name), int(p.partition_index), int(p.timestamp))
            for t in req.topics
            for p in t.partitions
        ],
        # v2+: a read_committed client's "latest" is the last stable offset.
        field_or(req, "isolation_level", 0),
    )

    def respond(entries: list[shapes.ListOffsetsPartitionResponseShape]) -> KafkaResponse:
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

    def reply(resp: ListOffsetsResponse) -> KafkaResponse:
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

    def fail(code: int) -> KafkaResponse:
        return respond(
            [
                {"partition_index": p, "error_code": code, "timestamp": -1, "offset": -1}
                for _, p in pairs
            ]
        )

    return Forward(native, reply, fail)
