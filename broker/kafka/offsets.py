"""OffsetCommit and OffsetFetch onto the group offset registry the native apis use.

A consumer using ``assign`` commits with member id "" and generation -1: rillet accepts that
while the group has no members, like Kafka. A request-level failure (NOT_COORDINATOR, ...)
is repeated on every partition, where Kafka's clients look for it in these versions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar

from rillet.broker.kafka import shapes
from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.translation import Answer, Forward, KafkaResponse, field_or
from rillet.wire import group_messages as gm
from rillet.wire.error_codes import ErrorCode

P = TypeVar("P")


class _AskedTopic(Protocol):
    """A topic an OffsetFetch asks for (every version names them alike)."""

    @property
    def name(self) -> str: ...

    @property
    def partition_indexes(self) -> Sequence[int]: ...


class _AskedGroup(Protocol):
    """A group an OffsetFetch asks for: v8's groups, or the request itself before."""

    @property
    def group_id(self) -> str: ...

    @property
    def topics(self) -> Sequence[_AskedTopic] | None: ...


def _grouped(pairs: list[tuple[str, P]]) -> dict[str, list[P]]:
    """Entries under their topics, in the order topics first appear."""
    topics: dict[str, list[P]] = {}
    for topic, entry in pairs:
        topics.setdefault(topic, []).append(entry)
    return topics


def translate_offset_commit(
    schema: ApiSchema, req: shapes.OffsetCommitRequests
) -> Forward[gm.OffsetCommitResponse]:
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
                field_or(p, "committed_leader_epoch", -1),
            )
            for t in req.topics
            for p in t.partitions
        ],
    )

    def respond(codes: list[int]) -> KafkaResponse:
        entries: list[tuple[str, shapes.OffsetCommitResponsePartitionShape]] = [
            (topic, {"partition_index": p, "error_code": code})
            for (topic, p), code in zip(pairs, codes, strict=True)
        ]
        topics: list[shapes.OffsetCommitResponseTopicShape] = [
            {"name": name, "partitions": partitions}
            for name, partitions in _grouped(entries).items()
        ]
        return build(schema.response_type, {"throttle_time": 0, "topics": topics})

    def reply(resp: gm.OffsetCommitResponse) -> KafkaResponse:
        if resp.error_code != ErrorCode.NONE:
            return respond([resp.error_code] * len(pairs))
        by_partition = {(e.topic, e.partition): e.error_code for e in resp.partitions}
        return respond([by_partition.get(pair, ErrorCode.NONE) for pair in pairs])

    def fail(code: int) -> KafkaResponse:
        return respond([code] * len(pairs))

    return Forward(native, reply, fail)


def _wanted(topics: Iterable[_AskedTopic] | None) -> list[gm.GroupTopicPartitions] | None:
    if topics is None:
        return None
    return [
        gm.GroupTopicPartitions(str(t.name), [int(p) for p in t.partition_indexes]) for t in topics
    ]


def _partition_entry(
    o: gm.FetchedOffset, code: int
) -> tuple[str, shapes.OffsetFetchResponsePartitionShape]:
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


def _topics(
    offsets: list[gm.FetchedOffset], code: int
) -> list[shapes.OffsetFetchResponseTopicShape]:
    entries = [_partition_entry(o, code) for o in offsets]
    return [{"name": name, "partitions": parts} for name, parts in _grouped(entries).items()]


def translate_offset_fetch(
    schema: ApiSchema, req: shapes.OffsetFetchRequests
) -> Forward[gm.OffsetFetchResponse] | Answer:
    no_groups: tuple[_AskedGroup, ...] = ()
    if hasattr(req, "groups"):  # v8+
        return _translate_groups(schema, field_or(req, "groups", no_groups))
    wanted = _wanted(req.topics)

    def respond(offsets: list[gm.FetchedOffset], code: int = ErrorCode.NONE) -> KafkaResponse:
        return build(
            schema.response_type,
            {"throttle_time": 0, "topics": _topics(offsets, code), "error_code": code},
        )

    def reply(resp: gm.OffsetFetchResponse) -> KafkaResponse:
        return respond(resp.offsets, resp.error_code)

    def fail(code: int) -> KafkaResponse:
        asked = [gm.FetchedOffset(t.topic, p, -1) for t in wanted or [] for p in t.partitions]
        return respond(asked, code)

    return Forward(gm.OffsetFetchRequest(str(req.group_id), wanted), reply, fail)


def _translate_groups(
    schema: ApiSchema, groups: Sequence[_AskedGroup]
) -> Forward[gm.OffsetFetchResponse] | Answer:
    """v8+: several groups in one request, each answered (or refused) on its own: a group's
    error is its own, with no partitions."""
    asked = [(str(g.group_id), _wanted(g.topics)) for g in groups]

    def respond(groups: list[tuple[str, int, list[gm.FetchedOffset]]]) -> KafkaResponse:
        return build(
            schema.response_type,
            {
                "groups": [
                    {"group_id": group_id, "error_code": code, "topics": _topics(offsets, 0)}
                    for group_id, code, offsets in groups
                ]
            },
        )

    if not asked:
        return Answer(respond([]))

    def reply(resp: gm.OffsetFetchResponse) -> KafkaResponse:
        first = (asked[0][0], resp.error_code, resp.offsets)
        more = [(g.group_id, g.error_code, g.offsets) for g in resp.more_groups]
        return respond([first, *more])

    def fail(code: int) -> KafkaResponse:
        return respond([(group_id, code, []) for group_id, _ in asked])

    native = gm.OffsetFetchRequest(
        asked[0][0], asked[0][1], [gm.OffsetFetchGroup(g, w) for g, w in asked[1:]]
    )
    return Forward(native, reply, fail)
