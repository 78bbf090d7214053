"""Power cuts under the stores (the chaos harness's LazyDisk layer): what survives is exactly
what was fsynced — a partition log up to its last flush, the Raft log up to its last sync."""

from __future__ import annotations

from pathlib import Path

import pytest
from lazy_disk_layer import install_lazy_disk
from store_batches import T0, batch, open_log, records_of

from rillet.chaos.lazy_disk import LazyDisk
from rillet.raft.durable_log import DurableLog
from rillet.raft.messages import LogEntry


@pytest.fixture
def disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LazyDisk:
    return install_lazy_disk(monkeypatch, tmp_path)


def _reopen_plain(monkeypatch: pytest.MonkeyPatch) -> None:
    """After the cut the layer takes no more calls: reopen through the real ones."""
    monkeypatch.undo()


def test_a_partition_log_keeps_exactly_its_flushed_prefix(
    disk: LazyDisk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "data" / "t-0"
    log = open_log(directory, segment_bytes=2_000)  # several segments: rolls and indexes too
    log.start_leader_epoch(1)
    for i in range(30):
        log.append_as_leader(batch([b"v%03d" % i] * 5), 1, T0)
    log.flush()
    flushed = log.log_end_offset
    for i in range(30, 45):
        log.append_as_leader(batch([b"v%03d" % i] * 5), 1, T0)
    assert log.log_end_offset > flushed
    disk.lose_unsynced()
    _reopen_plain(monkeypatch)
    log = open_log(directory, segment_bytes=2_000)
    assert log.log_end_offset == flushed
    offsets: list[int] = []
    while not offsets or offsets[-1] + 1 < flushed:
        offsets += [o for o, _ in records_of(log.read_bytes(len(offsets), 1 << 20))]
    assert offsets == list(range(flushed))
    log.close()


def _entries(lo: int, hi: int, term: int) -> list[LogEntry]:
    return [LogEntry(i, term, bytes([i % 256]) * 300) for i in range(lo, hi)]


def test_the_raft_log_keeps_every_synced_entry_and_no_other(
    disk: LazyDisk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "data" / "raft"
    log = DurableLog.open(directory, segment_bytes=1 << 20)
    log.append(_entries(1, 40, 1))
    log.sync()
    log.append(_entries(30, 60, 2))  # replaces a suffix (a new leader's entries), synced
    log.sync()
    log.append(_entries(60, 70, 2))  # never synced
    disk.lose_unsynced()
    _reopen_plain(monkeypatch)
    log = DurableLog.open(directory, segment_bytes=1 << 20)
    assert log.last_index() == 59
    assert [log.term(i) for i in (29, 30, 59)] == [1, 2, 2]
    log.close()
