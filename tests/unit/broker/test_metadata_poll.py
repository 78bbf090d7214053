"""A broker's read of the metadata log, step by step: the long poll and its timeout, again
at once when unanswered or empty, after RETRY_S when refused, a snapshot ends the read."""

from __future__ import annotations

from rillet.broker.cluster.metadata_poll import (
    LONG_POLL_MS,
    RETRY_S,
    Entries,
    Fetch,
    MetadataPoll,
    SnapshotReady,
    Wait,
)
from rillet.raft.quorum import Entry, Snapshot
from rillet.wire.error_codes import ErrorCode


def test_a_read_long_polls_and_asks_again_until_entries_come() -> None:
    poll = MetadataPoll(7, request_timeout_s=2.0, max_entries=50)
    first = poll.fetch()
    assert first == Fetch(7, 50, LONG_POLL_MS, 2.0 + LONG_POLL_MS / 1000)
    assert poll.unanswered() == first  # no answer in time: the same fetch at once
    assert poll.answered(ErrorCode.NONE, [], None) == first  # the long poll ran out
    entries = [Entry(8, 1, b"a"), Entry(9, 1, b"b")]
    assert poll.answered(ErrorCode.NONE, entries, None) == Entries(entries)


def test_a_refusal_waits_and_a_snapshot_ends_the_read() -> None:
    poll = MetadataPoll(0, request_timeout_s=1.0, long_poll_ms=150)
    assert poll.fetch().timeout_s == 1.15
    refused = poll.answered(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, [], None, "bad token")
    assert refused == Wait(RETRY_S, "CLUSTER_AUTHORIZATION_FAILED bad token")
    snapshot = Snapshot(40, 3, b"state")
    assert poll.answered(ErrorCode.NONE, [Entry(41, 3, b"x")], snapshot) == SnapshotReady(snapshot)
