"""What readers of the committed log get, around snapshots."""

from __future__ import annotations

import pytest

from rillet.raft.committed_entries import CommittedEntries
from rillet.raft.errors import SnapshotRequired
from rillet.raft.quorum import Entry, Snapshot


def entries(first: int, last: int) -> list[Entry]:
    return [Entry(i, 1, b"e%d" % i) for i in range(first, last + 1)]


def test_readers_get_entries_in_order_in_bounded_slices() -> None:
    c = CommittedEntries(Snapshot(0, 0, b""))
    assert c.snapshot is None and c.applied_index == 0
    assert c.after(0, 10) == []
    for e in entries(1, 5):
        c.applied(e)
    assert [e.index for e in c.after(0, 3)] == [1, 2, 3]
    assert [e.index for e in c.after(3, 10)] == [4, 5]
    assert c.after(5, 10) == [] and c.applied_index == 5


def test_a_reader_behind_the_compaction_restores_the_snapshot() -> None:
    c = CommittedEntries(Snapshot(0, 0, b""))
    for e in entries(1, 6):
        c.applied(e)
    c.compacted(Snapshot(4, 1, b"state"))
    with pytest.raises(SnapshotRequired) as caught:
        c.after(3, 10)
    assert caught.value.snapshot_index == 4
    assert [e.index for e in c.after(4, 10)] == [5, 6]
    assert c.snapshot is not None and c.snapshot.index == 4


def test_a_snapshot_from_the_leader_replaces_what_was_applied() -> None:
    c = CommittedEntries(Snapshot(3, 1, b"on disk"))
    assert c.applied_index == 3 and c.snapshot is not None
    with pytest.raises(SnapshotRequired):
        c.after(0, 10)
    for e in entries(4, 5):
        c.applied(e)
    c.installed(Snapshot(9, 2, b"leader's"))
    assert c.applied_index == 9
    assert c.after(9, 10) == []
    with pytest.raises(SnapshotRequired):
        c.after(5, 10)
