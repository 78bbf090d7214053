"""OffsetDelete decisions: what may go, what is refused and why, and the record applied.

Kafka refuses to delete offsets of a topic the group's members read (they would commit it
again); rillet does the same for both kinds of groups: a KIP-848-style member's topics and
pattern, a classic consumer's subscription read from its protocol metadata (unreadable
metadata counts as reading every topic).
"""

from __future__ import annotations

import random
import struct

import pytest

from rillet.metadata_quorum.classic_group_records import ClassicMember, ClassicProtocolEntry
from rillet.metadata_quorum.classic_group_registry import ClassicGroupState, ClassicMemberState
from rillet.metadata_quorum.controller import Controller, ControllerConfig
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.group_coordinator import MemberHeartbeat
from rillet.metadata_quorum.group_offset_deletion import (
    decide_offset_deletion,
    subscription_topics,
)
from rillet.metadata_quorum.group_records import CommittedOffset, OffsetsCommitted
from rillet.metadata_quorum.records import RegisterBroker
from rillet.metadata_quorum.state import MetadataState
from rillet.wire.error_codes import ErrorCode

GROUP = "g"


def apply(state: MetadataState, decision: Decision) -> None:
    if decision.records:
        state.apply_entry(state.last_applied_index + 1, decision.records)


def cluster() -> tuple[Controller, MetadataState]:
    ctl = Controller(ControllerConfig(), random.Random(1))
    state = MetadataState()
    apply(state, ctl.register_broker(state, RegisterBroker(1, "i1", "h", 1), 0))
    apply(state, ctl.heartbeat(state, 1, state.brokers[1].broker_epoch, True, 0))
    for topic in ("read", "old"):
        apply(state, ctl.create_topic(state, topic, 2, 1, {}))
    ctl.on_become_leader(state, 0)
    return ctl, state


def commit_everything(state: MetadataState) -> None:
    offsets = [
        CommittedOffset(state.topic_ids[t], p, 10) for t in ("read", "old") for p in range(2)
    ]
    state.apply_entry(state.last_applied_index + 1, [OffsetsCommitted(GROUP, offsets)])


def committed(state: MetadataState) -> set[tuple[str, int]]:
    names = {tid: name for name, tid in state.topic_ids.items()}
    return {(names[tid], p) for tid, p in state.groups.offsets.get(GROUP, {})}


def join(
    ctl: Controller, state: MetadataState, topics: tuple[str, ...], pattern: str | None
) -> None:
    hb = MemberHeartbeat(GROUP, "m", True, "c", "h", topics, pattern, 3000, "", None, None)
    apply(state, ctl.groups.heartbeat(state, hb, 0))


def consumer_subscription(*topics: str, version: int = 1) -> bytes:
    body = struct.pack(">hi", version, len(topics))
    for t in topics:
        body += struct.pack(">h", len(t)) + t.encode()
    return body + struct.pack(">i", -1) + struct.pack(">i", 0)  # user data, owned partitions


def classic_member(metadata: bytes, protocol_type: str = "consumer") -> ClassicGroupState:
    member = ClassicMember(
        "c1", None, "client", "h", 3000, 3000, [ClassicProtocolEntry("range", metadata)]
    )
    return ClassicGroupState(
        GROUP, 1, protocol_type, "range", "c1", {"c1": ClassicMemberState(member)}, synced=True
    )


def test_an_empty_groups_offsets_go_and_others_stay() -> None:
    _, state = cluster()
    commit_everything(state)
    decided = decide_offset_deletion(state, GROUP, [("old", 0), ("old", 1), ("old", 1)])
    assert decided.error == ErrorCode.NONE
    assert decided.partitions == {("old", 0): ErrorCode.NONE, ("old", 1): ErrorCode.NONE}
    assert decided.record is not None
    state.apply_entry(state.last_applied_index + 1, [decided.record])
    assert committed(state) == {("read", 0), ("read", 1)}


def test_deleting_the_last_offsets_of_a_group_known_only_by_them_forgets_it() -> None:
    _, state = cluster()
    commit_everything(state)
    decided = decide_offset_deletion(
        state, GROUP, [(t, p) for t in ("read", "old") for p in (0, 1)]
    )
    assert decided.record is not None
    state.apply_entry(state.last_applied_index + 1, [decided.record])
    assert GROUP not in state.groups.offsets
    assert decide_offset_deletion(state, GROUP, [("old", 0)]).error == ErrorCode.GROUP_ID_NOT_FOUND


def test_unknown_groups_topics_and_partitions() -> None:
    _, state = cluster()
    assert (
        decide_offset_deletion(state, "nobody", [("old", 0)]).error == ErrorCode.GROUP_ID_NOT_FOUND
    )
    assert decide_offset_deletion(state, "", [("old", 0)]).error == ErrorCode.INVALID_GROUP_ID
    commit_everything(state)
    decided = decide_offset_deletion(state, GROUP, [("gone", 0), ("old", 7), ("old", 0)])
    assert decided.partitions == {
        ("gone", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ("old", 7): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ("old", 0): ErrorCode.NONE,
    }


@pytest.mark.parametrize(("topics", "pattern"), [(("read",), None), ((), "re.d")])
def test_a_member_reading_the_topic_keeps_its_offsets(
    topics: tuple[str, ...], pattern: str | None
) -> None:
    ctl, state = cluster()
    commit_everything(state)
    join(ctl, state, topics, pattern)
    decided = decide_offset_deletion(state, GROUP, [("read", 0), ("old", 0)])
    assert decided.partitions == {
        ("read", 0): ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC,
        ("old", 0): ErrorCode.NONE,
    }


def test_a_classic_consumer_reading_the_topic_keeps_its_offsets() -> None:
    _, state = cluster()
    commit_everything(state)
    state.classic_groups.groups[GROUP] = classic_member(consumer_subscription("read"))
    decided = decide_offset_deletion(state, GROUP, [("read", 1), ("old", 1)])
    assert decided.partitions == {
        ("read", 1): ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC,
        ("old", 1): ErrorCode.NONE,
    }


@pytest.mark.parametrize(
    "group", [classic_member(b"\x00"), classic_member(consumer_subscription("read"), "connect")]
)
def test_a_classic_member_whose_subscription_cannot_be_read_keeps_every_offset(
    group: ClassicGroupState,
) -> None:
    _, state = cluster()
    commit_everything(state)
    state.classic_groups.groups[GROUP] = group
    decided = decide_offset_deletion(state, GROUP, [("old", 0)])
    assert decided.partitions == {("old", 0): ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC}
    assert decided.record is None


@pytest.mark.parametrize("version", [0, 1, 3])
def test_subscriptions_of_every_version_are_read(version: int) -> None:
    assert subscription_topics(consumer_subscription("a", "bc", version=version)) == ["a", "bc"]


def test_subscription_bytes_that_do_not_parse_are_none_never_an_exception() -> None:
    rng = random.Random(7)
    good = consumer_subscription("orders", "payments")
    for _ in range(2000):
        data = bytearray(good[: rng.randrange(len(good) + 1)])
        if data and rng.random() < 0.5:
            data[rng.randrange(len(data))] = rng.randrange(256)
        result = subscription_topics(bytes(data))
        assert result is None or all(isinstance(t, str) for t in result)
    assert subscription_topics(b"") is None
    assert subscription_topics(struct.pack(">hi", 0, -1)) is None
