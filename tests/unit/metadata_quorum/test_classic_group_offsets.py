"""Offset commits of classic groups are fenced like Kafka's; the records of classic groups
survive encoding; a group id belongs to one protocol at a time."""

from __future__ import annotations

import cbor2
from classic_group_harness import GROUP, Harness
from hypothesis import given
from hypothesis import strategies as st

from rillet.metadata_quorum.classic_group_offsets import (
    commit_classic_offsets,
    held_by_classic_members,
    is_classic_group,
)
from rillet.metadata_quorum.classic_group_records import (
    ClassicAssignmentEntry,
    ClassicGroupJoined,
    ClassicGroupSynced,
    ClassicMember,
    ClassicMemberReplaced,
    ClassicMembersRemoved,
    ClassicProtocolEntry,
    ClassicRebalanceStarted,
)
from rillet.metadata_quorum.errors import MetadataRecordError
from rillet.metadata_quorum.group_records import GroupMember
from rillet.metadata_quorum.records import decode_entry, encode_entry
from rillet.metadata_quorum.state import MetadataState
from rillet.wire.error_codes import ErrorCode

E = ErrorCode
OFFSETS = [("t", 0, 7, "md"), ("t", 1, 9, ""), ("nope", 0, 1, "")]


def commit(
    h: Harness,
    member_id: str,
    generation: int,
    instance: str | None = None,
    errors: dict[tuple[str, int], ErrorCode] | None = None,
) -> ErrorCode:
    decision = commit_classic_offsets(
        h.state,
        GROUP,
        member_id,
        instance,
        generation,
        OFFSETS,
        1234,
        {} if errors is None else errors,
    )
    h.commit(decision)
    return decision.error


def test_members_commit_with_their_generation_and_nobody_else_does() -> None:
    h = Harness()
    h.add_topic()
    m1, m2 = h.stable_group(b"a", b"b")
    errors: dict[tuple[str, int], ErrorCode] = {}
    assert commit(h, m1, 2, errors=errors) == E.NONE
    assert errors == {("nope", 0): E.UNKNOWN_TOPIC_OR_PARTITION}
    table = h.state.groups.offsets[GROUP]
    assert table[("t-id", 0)].offset == 7 and table[("t-id", 1)].metadata == ""
    assert commit(h, m1, 1) == E.ILLEGAL_GENERATION
    assert commit(h, "ghost", 2) == E.UNKNOWN_MEMBER_ID
    assert commit(h, "", -1) == E.UNKNOWN_MEMBER_ID  # a tool, while the group has members
    # the leader's subscription changed: PreparingRebalance, commits of the generation go
    h.join(m1, protocols=[("range", b"more")])
    assert commit(h, m2, 2) == E.NONE
    h.join(m2)
    assert commit(h, m2, 3) == E.REBALANCE_IN_PROGRESS  # waiting for the leader's assignment
    assert commit(h, m2, 2) == E.ILLEGAL_GENERATION


def test_a_static_member_s_old_id_is_fenced_and_an_empty_group_takes_any_commit() -> None:
    h = Harness()
    h.add_topic()
    old = h.answers[h.join("", instance="i1")].member_id
    h.sync(old, 1, {old: b"x"})
    new = h.answers[h.join("", instance="i1")].member_id
    assert commit(h, old, 1, instance="i1") == E.FENCED_INSTANCE_ID
    assert commit(h, new, 1, instance="i1") == E.NONE
    h.leave((new, "i1"))
    assert h.group().phase == "Empty"
    assert commit(h, "", -1) == E.NONE
    assert commit(h, new, 1) == E.UNKNOWN_MEMBER_ID
    fresh = Harness()
    fresh.add_topic()
    assert commit(fresh, "m", 0) == E.ILLEGAL_GENERATION  # no such classic group


def test_a_group_id_belongs_to_one_protocol_at_a_time() -> None:
    h = Harness()
    assert not is_classic_group(h.state, GROUP)
    (m1,) = h.stable_group(b"a")
    assert is_classic_group(h.state, GROUP) and held_by_classic_members(h.state, GROUP)
    h.leave((m1, None))
    assert is_classic_group(h.state, GROUP) and not held_by_classic_members(h.state, GROUP)
    member = GroupMember(GROUP, "k1", "c", "h", ["t"], None, 10_000, "sticky")
    h.state.apply_entry(h.state.last_applied_index + 1, [member])
    assert not is_classic_group(h.state, GROUP)  # consumer-protocol members hold it now
    assert h.answers[h.join("")].error_code == E.INCONSISTENT_GROUP_PROTOCOL


MEMBER = ClassicMember(
    "m1", "i1", "client", "/h", 10_000, 30_000, [ClassicProtocolEntry("range", b"\x00\xff")]
)
RECORDS = [
    ClassicGroupJoined(GROUP, 3, "consumer", "range", "m1", [MEMBER]),
    ClassicGroupJoined(GROUP, 4, "", None, "", []),
    ClassicGroupSynced(GROUP, 3, [ClassicAssignmentEntry("m1", b"\x01")]),
    ClassicRebalanceStarted(GROUP, 3),
    ClassicMemberReplaced(GROUP, "m0", MEMBER),
    ClassicMembersRemoved(GROUP, ["m1", "m2"]),
]


def test_a_generation_recorded_again_or_older_changes_nothing() -> None:
    h = Harness()
    (m1,) = h.stable_group(b"a")
    before = h.state.to_snapshot()
    stale = ClassicGroupJoined(GROUP, 1, "consumer", "range", "x", [MEMBER])
    h.state.apply_entry(h.state.last_applied_index + 1, [stale])
    after = MetadataState.from_snapshot(h.state.to_snapshot())
    after.last_applied_index = MetadataState.from_snapshot(before).last_applied_index
    assert after.to_snapshot() == before
    assert h.group().members.keys() == {m1}


def test_classic_records_round_trip() -> None:
    assert decode_entry(encode_entry(RECORDS)) == RECORDS
    for record in RECORDS:
        assert decode_entry(encode_entry([record])) == [record]


ENCODED = encode_entry(RECORDS)


@given(st.integers(0, len(ENCODED) - 1), st.integers(0, 255), st.integers(0, len(ENCODED)))
def test_damaged_classic_records_decode_or_fail_typed(at: int, byte: int, cut: int) -> None:
    data = bytearray(ENCODED[:cut] if cut < at else ENCODED)
    if at < len(data):
        data[at] = byte
    try:
        decode_entry(bytes(data))
    except MetadataRecordError:
        pass  # a typed error, never a crash


def test_a_snapshot_from_before_classic_groups_still_loads() -> None:
    h = Harness()
    h.add_topic()
    doc = cbor2.loads(h.state.to_snapshot())
    doc["version"] = 2
    del doc["classic_groups"]
    restored = MetadataState.from_snapshot(cbor2.dumps(doc, canonical=True))
    assert restored.topic_ids == h.state.topic_ids
    assert restored.classic_groups.groups == {}
