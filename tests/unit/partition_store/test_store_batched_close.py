"""A clean close of many logs made durable by two syncs of the file system.

A node stopping closes every log it hosts; closed one by one, each close was a dozen fsyncs
and 700 partitions took seconds to stop. ``prepare_close`` writes without fsyncs, the
caller's batch commits, then ``finish_close`` writes the recovery point and the
clean-shutdown marker, which claim the rest is on disk. These tests hold the batched close
to the same result as ``close`` and to that order.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from store_batches import T0, batch, open_log, records_of

from rillet.partition_store.layout import CLEAN_SHUTDOWN_FILE, RECOVERY_POINT_FILE
from rillet.partition_store.log import PartitionLog
from rillet.partition_store.producer_state import ProducerStateTable
from rillet.wire import disk_io
from rillet.wire.atomic_file import SyncBatch
from rillet.wire.batch import build_batch


def _filled(directory: Path) -> PartitionLog:
    """A log with two segments, index entries, two leader epochs and an idempotent
    producer: every file a close writes has something to say."""
    log = open_log(directory, segment_bytes=4096, index_interval_bytes=256)
    log.start_leader_epoch(2)
    for i in range(40):
        log.append_as_leader(batch([b"v%03d" % i * 50], ts=T0 + i), 2 if i < 20 else 3, T0)
    idempotent = build_batch(
        [(T0, None, b"p", None)], producer_id=7, producer_epoch=0, base_sequence=0
    )
    log.append_as_leader(idempotent, 3, T0)
    return log


def _state(log: PartitionLog) -> tuple[object, ...]:
    producers: ProducerStateTable = log._producers
    return (
        log.log_start_offset,
        log.log_end_offset,
        log.recovery_point,
        log.latest_epoch,
        log.end_offset_for_epoch(2),
        len(log._segments),
        producers.encode(),
        records_of(log.read_bytes(0, 1 << 20)),
        log.offset_for_timestamp(T0 + 30),
    )


def test_a_batched_close_reopens_like_a_close(tmp_path: Path) -> None:
    one, two = _filled(tmp_path / "t-0"), _filled(tmp_path / "t-1")
    one.close()
    sync = SyncBatch()
    two.prepare_close(sync)
    sync.commit()
    two.finish_close(sync)
    sync.commit()
    reopened = [open_log(tmp_path / "t-0"), open_log(tmp_path / "t-1")]
    assert [log.recovery_stats.clean_shutdown for log in reopened] == [True, True]
    assert reopened[1].recovery_stats.segments_trusted == len(reopened[1]._segments) > 1
    assert _state(reopened[0]) == _state(reopened[1])
    assert sorted(os.listdir(tmp_path / "t-0")) == sorted(os.listdir(tmp_path / "t-1"))
    for log in reopened:
        log.close()


def test_nothing_vouches_for_the_log_until_what_it_vouches_for_is_synced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first half writes no marker and no recovery point, and no fsync; a crash then
    (the node killed before its first sync) leaves a log the next start recovers."""
    fsyncs: list[int] = []
    monkeypatch.setattr(disk_io, "fsync", fsyncs.append)
    directory = tmp_path / "t-0"
    log = _filled(directory)
    recovery_point_before = (directory / RECOVERY_POINT_FILE).exists()
    fsyncs.clear()
    sync = SyncBatch()
    log.prepare_close(sync)
    assert not (directory / CLEAN_SHUTDOWN_FILE).exists()
    assert (directory / RECOVERY_POINT_FILE).exists() == recovery_point_before
    assert fsyncs == [] and sync.pending
    log.release()  # the node dies here
    monkeypatch.undo()
    reopened = open_log(directory)
    assert not reopened.recovery_stats.clean_shutdown
    assert reopened.log_end_offset == 41
    reopened.close()
