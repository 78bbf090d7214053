"""OffsetCommit and OffsetFetch onto the group offset registry the native apis use.

A consumer using ``assign`` commits with member id "" and generation -1: rillet accepts that
while the group has no members, like Kafka. A request-level failure (NOT_COORDINATOR, ...)
is repeated on every partition, where Kafka's clients look for it in these versions.
"""

from __future__ import annotations

from typing import Any

from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.translation import Forward
from rillet.wire import group_messages as gm
from rillet.wire.error_codes import ErrorCode


def _grouped(pairs: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    topics: dict[str, list[dict[str, Any]]] = {}
    for topic, entry in pairs:
        topics.setdefault(topic, []).append(entry)
    return [{"name": name, "partitions": entries} for name, entries in topics.items()]


def translate_offset_commit(schema: ApiSchema, req: Any) -> Forward:
    pairs = [(str(t.name), int(p.partition_index)) for t in req.topics for p in t.partitions]
    native = gm.OffsetCommitRequest(
        str(req.group_id),
        str(req.member_id),
        int(req.generation_id_or_member_epoch),
        [
            gm.OffsetCommitPartition(
                str(t.name),
                int(p.partition_index),
                int(p.committed_offset),
                p.committed_metadata or "",
            )
            for t in req.topics
            for p in t.partitions
        ],
    )

    def respond(codes: list[int]) -> Any:
        entries = [
            (topic, {"partition_index": p, "error_code": code})
            for (topic, p), code in zip(pairs, codes, strict=True)
        ]
        return build(schema.response_type, {"throttle_time": 0, "topics": _grouped(entries)})

    def reply(resp: gm.OffsetCommitResponse) -> Any:
        if resp.error_code != ErrorCode.NONE:
            return respond([resp.error_code] * len(pairs))
        by_partition = {(e.topic, e.partition): e.error_code for e in resp.partitions}
        return respond([by_partition.get(pair, ErrorCode.NONE) for pair in pairs])

    def fail(code: int) -> Any:
        return respond([code] * len(pairs))

    return Forward(native, reply, fail)


def translate_offset_fetch(schema: ApiSchema, req: Any) -> Forward:
    wanted = (
        None
        if req.topics is None
        else [
            gm.GroupTopicPartitions(str(t.name), [int(p) for p in t.partition_indexes])
            for t in req.topics
        ]
    )

    def respond(offsets: list[gm.FetchedOffset], code: int = ErrorCode.NONE) -> Any:
        entries = [
            (
                o.topic,
                {
                    "partition_index": o.partition,
                    "committed_offset": o.offset,
                    "committed_leader_epoch": -1,
                    "metadata": o.metadata,
                    "error_code": code,
                },
            )
            for o in offsets
        ]
        return build(
            schema.response_type,
            {"throttle_time": 0, "topics": _grouped(entries), "error_code": code},
        )

    def reply(resp: gm.OffsetFetchResponse) -> Any:
        return respond(resp.offsets, resp.error_code)

    def fail(code: int) -> Any:
        asked = [gm.FetchedOffset(t.topic, p, -1) for t in wanted or [] for p in t.partitions]
        return respond(asked, code)

    return Forward(gm.OffsetFetchRequest(str(req.group_id), wanted), reply, fail)
