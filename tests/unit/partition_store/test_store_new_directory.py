"""A log opened in a directory it creates: nothing to load, the same log as the loader's.

Creating a topic of thousands of partitions opens thousands of new logs; a directory the
open has just made cannot hold segments, checkpoints or a clean-shutdown marker, so none of
the loader's reads are made for it. These tests hold that shortcut to the loader's result
and to the same durability.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from store_batches import T0, TOPIC, batch, open_log, records_of

import rillet.partition_store.log as log_module
from rillet.partition_store.config import LogConfig
from rillet.partition_store.log import PartitionLog
from rillet.wire import disk_io
from rillet.wire.atomic_file import SyncBatch


def _state(log: PartitionLog) -> tuple[object, ...]:
    return (
        log.log_start_offset,
        log.log_end_offset,
        log.recovery_point,
        log.latest_epoch,
        log.end_offset_for_epoch(5),
        log.recovery_stats.segments_loaded,
        records_of(log.read_bytes(0, 1 << 20)),
    )


def _files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_a_created_directory_is_not_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_loading(*_args: object) -> None:
        raise AssertionError("a new directory has nothing to load")

    monkeypatch.setattr(log_module, "load_log", no_loading)
    monkeypatch.setattr(log_module, "load_transaction_state", no_loading)
    monkeypatch.setattr(log_module.LeaderEpochFile, "open", no_loading)
    log = open_log(tmp_path / "t-0")
    assert (log.log_start_offset, log.log_end_offset, log.latest_epoch) == (0, 0, -1)
    log.close()
    with pytest.raises(AssertionError, match="nothing to load"):
        open_log(tmp_path / "t-0")  # it exists now: the loader's turn


def test_a_new_directory_gives_the_loaders_log_through_appends_and_restarts(
    tmp_path: Path,
) -> None:
    """One log in a directory the open creates, one in a directory that already existed
    (empty, as a crash right after its creation leaves it): the same state at every step."""
    created = tmp_path / "t-0"
    existing = tmp_path / "t-1"
    existing.mkdir()
    logs = [open_log(created), open_log(existing)]
    assert logs[0].recovery_stats.clean_shutdown == logs[1].recovery_stats.clean_shutdown
    assert _state(logs[0]) == _state(logs[1])
    assert _files(created) == _files(existing)
    for log in logs:
        log.start_leader_epoch(3)
        for i in range(20):
            log.append_as_leader(batch([b"v%d" % i, b"w%d" % i], ts=T0 + i), 3 + i // 10, T0)
    assert _state(logs[0]) == _state(logs[1])
    for log in logs:
        log.close()
    logs = [open_log(created), open_log(existing)]
    assert _state(logs[0]) == _state(logs[1])
    assert logs[0].recovery_stats.segments_trusted == 1
    assert _files(created) == _files(existing)
    for log in logs:
        log.close()


def test_a_new_directory_is_durable_in_its_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a batch the parent is fsynced after the new files; with one, nothing is
    fsynced until the batch's sync, which covers the parent's new entry too."""
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(
        disk_io, "fsync", lambda fd: (synced.append(os.fstat(fd).st_ino), real_fsync(fd))[1]
    )
    PartitionLog.open(tmp_path / "t-0", LogConfig(), T0, TOPIC, 0).close()
    assert os.stat(tmp_path).st_ino in synced
    synced.clear()
    batch_sync = SyncBatch()
    log = PartitionLog.open(tmp_path / "t-1", LogConfig(), T0, TOPIC, 1, "", batch_sync)
    assert synced == [] and batch_sync.pending
    batch_sync.commit()
    log.close()
