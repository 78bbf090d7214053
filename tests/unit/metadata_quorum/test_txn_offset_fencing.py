"""Transactional offset commits naming a group member (TxnOffsetCommit v3, KIP-447) are fenced
by the group's generation, for classic and consumer-protocol groups; ones naming nobody are
left to the producer epoch."""

from __future__ import annotations

from classic_group_harness import GROUP, Harness
from test_group_coordinator import Members, cluster

from rillet.metadata_quorum.txn_offset_fencing import txn_commit_member_error
from rillet.wire.error_codes import ErrorCode

E = ErrorCode


def test_a_classic_member_commits_in_a_transaction_only_at_the_group_s_generation() -> None:
    h = Harness()
    h.add_topic()
    m1, m2 = h.stable_group(b"a", b"b")
    assert txn_commit_member_error(h.state, GROUP, m1, None, 2) is None
    assert txn_commit_member_error(h.state, GROUP, m1, None, 1) == E.ILLEGAL_GENERATION
    assert txn_commit_member_error(h.state, GROUP, "zombie", None, 2) == E.UNKNOWN_MEMBER_ID
    # naming nobody (an older client, a producer outside the group): its epoch fences it
    assert txn_commit_member_error(h.state, GROUP, "", None, -1) is None
    # a rebalance moved the group on: the old generation's member is fenced
    h.join(m1, protocols=[("range", b"more")])
    assert txn_commit_member_error(h.state, GROUP, m2, None, 2) is None  # not yet
    h.join(m2)
    assert h.state.classic_groups.group(GROUP).generation == 3  # type: ignore[union-attr]
    assert txn_commit_member_error(h.state, GROUP, m2, None, 2) == E.ILLEGAL_GENERATION
    assert txn_commit_member_error(h.state, GROUP, m2, None, 3) is None


def test_a_consumer_protocol_member_commits_in_a_transaction_at_its_epoch() -> None:
    ctl, state, _ = cluster(2)
    assert txn_commit_member_error(state, "g", "a", None, 1) == E.UNKNOWN_MEMBER_ID
    members = Members(ctl, state)
    members.join("a")
    members.settle()
    epoch = state.groups.groups["g"].members["a"].generation
    assert txn_commit_member_error(state, "g", "a", None, epoch) is None
    assert txn_commit_member_error(state, "g", "a", None, epoch - 1) == E.ILLEGAL_GENERATION
    assert txn_commit_member_error(state, "g", "b", None, epoch) == E.UNKNOWN_MEMBER_ID
    assert txn_commit_member_error(state, "g", "", None, -1) is None
