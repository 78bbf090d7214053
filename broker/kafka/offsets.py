"""OffsetCommit and OffsetFetch onto the group offset registry the native apis use.

A consumer using ``assign`` commits with member id "" and generation -1: rillet accepts that
while the group has no members, like Kafka. A request-level failure (NOT_COORDINATOR, ...)
is repeated on every partition, where Kafka's clients look for it in these versions.
"""

from __future__ import annotations

from typing import Any

from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.translation import Answer, Forward
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
                int(getattr(p, "committed_leader_epoch", -1)),
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


def _wanted(topics: Any) -> list[gm.GroupTopicPartitions] | None:
    if topics is None:
        return None
    return [
        gm.GroupTopicPartitions(str(t.name), [int(p) for p in t.partition_indexes]) for t in topics
    ]


def _partition_entry(o: gm.FetchedOffset, code: int) -> tuple[str, dict[str, Any]]:
    return (
        o.topic,
        {
            "partition_index": o.partition,
            "committed_offset": o.offset,
            "committed_leader_epoch": o.leader_epoch,
            "metadata": o.metadata,
            "error_code": code,
        },
    )


def translate_offset_fetch(schema: ApiSchema, req: Any) -> Forward | Answer:
    if schema.version >= 8:
        return _translate_groups(schema, req)
    wanted = _wanted(req.topics)

    def respond(offsets: list[gm.FetchedOffset], code: int = ErrorCode.NONE) -> Any:
        entries = [_partition_entry(o, code) for o in offsets]
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


def _translate_groups(schema: ApiSchema, req: Any) -> Forward | Answer:
    """v8+: several groups in one request, each answered (or refused) on its own: a group's
    error is its own, with no partitions."""
    asked = [(str(g.group_id), _wanted(g.topics)) for g in req.groups]

    def respond(groups: list[tuple[str, int, list[gm.FetchedOffset]]]) -> Any:
        return build(
            schema.response_type,
            {
                "groups": [
                    {
                        "group_id": group_id,
                        "error_code": code,
                        "topics": _grouped([_partition_entry(o, 0) for o in offsets]),
                    }
                    for group_id, code, offsets in groups
                ]
            },
        )

    if not asked:
        return Answer(respond([]))

    def reply(resp: gm.OffsetFetchResponse) -> Any:
        first = (asked[0][0], resp.error_code, resp.offsets)
        more = [(g.group_id, g.error_code, g.offsets) for g in resp.more_groups]
        return respond([first, *more])

    def fail(code: int) -> Any:
        return respond([(group_id, code, []) for group_id, _ in asked])

    native = gm.OffsetFetchRequest(
        asked[0][0], asked[0][1], [gm.OffsetFetchGroup(g, w) for g, w in asked[1:]]
    )
    return Forward(native, reply, fail)
