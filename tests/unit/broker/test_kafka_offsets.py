"""OffsetCommit and OffsetFetch through the Kafka codec, against kafka-python's classes."""

from __future__ import annotations

import pytest
from kafka.protocol.consumer.group import (
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
)
from kafka_front_end import forwarded

from rillet.broker.kafka.codec import encode_response
from rillet.wire import group_messages as gm
from rillet.wire.error_codes import ErrorCode

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_offset_commit_maps_to_the_group_registry_and_back() -> None:
    r = OffsetCommitRequest
    part = r.OffsetCommitRequestTopic.OffsetCommitRequestPartition
    for version in range(2, 8):
        request = r(
            group_id="g",
            generation_id_or_member_epoch=-1,
            member_id="",
            group_instance_id=None,
            retention_time_ms=-1,
            topics=[
                r.OffsetCommitRequestTopic(
                    name="t",
                    partitions=[
                        part(partition_index=0, committed_offset=5, committed_metadata="m"),
                        part(partition_index=1, committed_offset=7, committed_metadata=None),
                    ],
                )
            ],
        )
        schema, action = forwarded(request, version)
        assert action.native == gm.OffsetCommitRequest(
            "g",
            "",
            -1,
            [gm.OffsetCommitPartition("t", 0, 5, "m"), gm.OffsetCommitPartition("t", 1, 7, "")],
        )
        answer = gm.OffsetCommitResponse(
            ErrorCode.NONE, [gm.PartitionError("t", 1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]
        )
        data = encode_response(4, schema, action.reply(answer))
        decoded = OffsetCommitResponse.decode(data, version=version, header=True, framed=True)
        got = [
            (t.name, p.partition_index, p.error_code) for t in decoded.topics for p in t.partitions
        ]
        assert got == [("t", 0, 0), ("t", 1, 3)]
        refused = action.reply(gm.OffsetCommitResponse(ErrorCode.NOT_COORDINATOR))
        data = encode_response(4, schema, refused)
        decoded = OffsetCommitResponse.decode(data, version=version, header=True, framed=True)
        assert {p.error_code for t in decoded.topics for p in t.partitions} == {16}


def test_offset_fetch_maps_to_the_group_registry_and_back() -> None:
    r = OffsetFetchRequest
    for version in range(1, 8):  # 6 and 7 are flexible (header v1, compact encodings)
        request = r(
            group_id="g",
            topics=[r.OffsetFetchRequestTopic(name="t", partition_indexes=[0, 3])],
        )
        schema, action = forwarded(request, version)
        assert action.native == gm.OffsetFetchRequest("g", [gm.GroupTopicPartitions("t", [0, 3])])
        answer = gm.OffsetFetchResponse(
            ErrorCode.NONE, [gm.FetchedOffset("t", 0, 42, "meta"), gm.FetchedOffset("t", 3, -1)]
        )
        data = encode_response(4, schema, action.reply(answer))
        decoded = OffsetFetchResponse.decode(data, version=version, header=True, framed=True)
        got = [
            (t.name, p.partition_index, p.committed_offset, p.metadata, p.error_code)
            for t in decoded.topics
            for p in t.partitions
        ]
        assert got == [("t", 0, 42, "meta", 0), ("t", 3, -1, "", 0)]
        if version >= 2:
            _schema, everything = forwarded(r(group_id="g", topics=None), version)
            assert everything.native == gm.OffsetFetchRequest("g", None)


def test_offset_fetch_v8_asks_for_several_groups_and_answers_each() -> None:
    r = OffsetFetchRequest
    group, topic = r.OffsetFetchRequestGroup, r.OffsetFetchRequestGroup.OffsetFetchRequestTopics
    request = r(
        groups=[
            group(group_id="a", topics=[topic(name="t", partition_indexes=[0])]),
            group(group_id="b", topics=None),
            group(group_id="c", topics=None),
        ],
        require_stable=False,
    )
    schema, action = forwarded(request, 8)
    assert action.native == gm.OffsetFetchRequest(
        "a",
        [gm.GroupTopicPartitions("t", [0])],
        [gm.OffsetFetchGroup("b", None), gm.OffsetFetchGroup("c", None)],
    )
    answer = gm.OffsetFetchResponse(
        ErrorCode.NONE,
        [gm.FetchedOffset("t", 0, 42)],
        more_groups=[
            gm.GroupOffsets("b", ErrorCode.NONE, [gm.FetchedOffset("u", 1, 7, "m")]),
            gm.GroupOffsets("c", ErrorCode.GROUP_AUTHORIZATION_FAILED),
        ],
    )
    decoded = OffsetFetchResponse.decode(
        encode_response(4, schema, action.reply(answer)), version=8, header=True, framed=True
    )
    got = [
        (
            g.group_id,
            g.error_code,
            [
                (t.name, p.partition_index, p.committed_offset)
                for t in g.topics
                for p in t.partitions
            ],
        )
        for g in decoded.groups
    ]
    assert got == [("a", 0, [("t", 0, 42)]), ("b", 0, [("u", 1, 7)]), ("c", 30, [])]
    failed = OffsetFetchResponse.decode(
        encode_response(4, schema, action.fail(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)),
        version=8,
        header=True,
        framed=True,
    )
    assert [(g.group_id, g.error_code, g.topics) for g in failed.groups] == [
        ("a", 14, []),
        ("b", 14, []),
        ("c", 14, []),
    ]
