"""What the metadata follower does with what it reads: apply in order, resume after the last
applied entry, hand a snapshot over every snapshot_every entries, restore one."""

from __future__ import annotations

import pytest

from rillet.metadata_quorum.follower_progress import FollowerProgress
from rillet.metadata_quorum.records import RegisterBroker, encode_entry
from rillet.raft.quorum import Entry


def entry(index: int, broker_id: int) -> Entry:
    return Entry(index, 2, encode_entry([RegisterBroker(broker_id, f"i{broker_id}", "h", 1)]))


def test_entries_apply_in_order_and_a_snapshot_is_due_every_so_many() -> None:
    progress = FollowerProgress(snapshot_every=3)
    batch = [entry(1, 1), entry(2, 2)]
    for e in batch:
        progress.apply(e)
    assert progress.read_after() == 2
    assert progress.applied(batch) is None
    progress.apply(entry(3, 3))
    snapshot = progress.applied([entry(3, 3)])
    assert snapshot is not None and (snapshot.index, snapshot.term) == (3, 2)
    assert progress.applied([entry(4, 4)]) is None  # the count starts again


def test_a_restore_continues_from_the_snapshot_and_needs_one() -> None:
    source = FollowerProgress(snapshot_every=1)
    source.apply(entry(1, 1))
    taken = source.applied([entry(1, 1)])
    assert taken is not None
    progress = FollowerProgress()
    for e in (entry(1, 1), entry(2, 2)):
        progress.apply(e)
    progress.restore(taken)
    assert progress.read_after() == 1 and set(progress.state.brokers) == {1}
    with pytest.raises(RuntimeError, match="no snapshot"):
        progress.restore(None)
