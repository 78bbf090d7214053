"""Which consumer groups DeleteGroups may remove, and what the deletion removes."""

from __future__ import annotations

from classic_group_harness import GROUP, Harness

from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.group_deletion import decide_deletions
from rillet.metadata_quorum.group_records import (
    CommittedOffset,
    GroupDeleted,
    GroupMember,
    OffsetsCommitted,
)
from rillet.metadata_quorum.state import MetadataState
from rillet.wire.error_codes import ErrorCode

E = ErrorCode


def decide(h: Harness, *ids: str) -> dict[str, ErrorCode]:
    results, records = decide_deletions(h.state, list(ids), h.coord.joining)
    h.commit(Decision(list(records)))
    return {r.group_id: r.error for r in results}


def offsets(state: MetadataState, group: str) -> None:
    record = OffsetsCommitted(group, [CommittedOffset("t-id", 0, 5, "", 1)])
    state.apply_entry(state.last_applied_index + 1, [record])


def test_unknown_and_empty_ids() -> None:
    h = Harness()
    assert decide(h, "nope", "") == {"nope": E.GROUP_ID_NOT_FOUND, "": E.INVALID_GROUP_ID}


def test_a_classic_group_with_members_is_not_empty_until_they_leave() -> None:
    h = Harness()
    (m1,) = h.stable_group(b"a")
    offsets(h.state, GROUP)
    assert decide(h, GROUP) == {GROUP: E.GROUP_NOT_EMPTY}
    h.leave((m1, None))
    assert decide(h, GROUP, GROUP) == {GROUP: E.NONE}  # named twice: one result
    assert h.state.classic_groups.group(GROUP) is None
    assert GROUP not in h.state.groups.offsets
    assert decide(h, GROUP) == {GROUP: E.GROUP_ID_NOT_FOUND}


def test_a_member_on_its_way_in_keeps_the_group() -> None:
    h = Harness()
    (m1,) = h.stable_group(b"a")
    h.leave((m1, None))
    h.join("")  # a member id handed out (MEMBER_ID_REQUIRED): it will join with it
    assert decide(h, GROUP) == {GROUP: E.GROUP_NOT_EMPTY}


def test_a_group_known_only_by_its_offsets_and_a_consumer_protocol_group() -> None:
    h = Harness()
    offsets(h.state, "offsets-only")
    member = GroupMember("kip848", "m1", "c", "h", ["t"], None, 45_000, "range")
    h.state.apply_entry(h.state.last_applied_index + 1, [member])
    assert decide(h, "offsets-only", "kip848") == {
        "offsets-only": E.NONE,
        "kip848": E.GROUP_NOT_EMPTY,
    }
    assert "offsets-only" not in h.state.groups.offsets
    assert h.records[-1] == GroupDeleted("offsets-only")
