"""The durable Raft log: what it keeps across reopen, what it cuts, what it refuses.

Real files in tmp_path. Each test says which crash it stands for: a torn last frame (cut on
open), damage elsewhere (refused), a full disk (typed error, synced entries intact).
"""

from __future__ import annotations

import errno
import os
import random
import shutil
from pathlib import Path

import cbor2
import pytest

from rillet.raft.directory_identity import BadDirectoryId
from rillet.raft.durable_log import (
    CorruptStorage,
    DurableLog,
    StorageFull,
    decode_frames,
    encode_frame,
)
from rillet.raft.log_storage import MemoryStorage
from rillet.raft.messages import HardState, LogEntry
from rillet.raft.quorum import Snapshot
from rillet.wire import disk_io


def entries(lo: int, hi: int, term: int = 1, size: int = 10) -> list[LogEntry]:
    return [LogEntry(i, term, bytes([i % 256]) * size) for i in range(lo, hi)]


def reopen(log: DurableLog, **kw: int) -> DurableLog:
    log.close()
    return DurableLog.open(log.directory, **kw)


def segments(directory: Path) -> list[Path]:
    return sorted(directory.glob("log-*.seg"))


def test_entries_hard_state_and_snapshot_survive_reopen(tmp_path: Path) -> None:
    log = DurableLog.open(tmp_path)
    log.append(entries(1, 50))
    log.sync()
    log.set_hard_state(HardState(3, 2, 40))
    log = reopen(log)
    assert log.last_index() == 49 and log.entries(1, 50) == entries(1, 50)
    assert log.hard_state() == HardState(3, 2, 40)
    log.apply_snapshot(Snapshot(30, 1, b"state"))
    log = reopen(log)
    assert log.first_index() == 31 and log.snapshot() == Snapshot(30, 1, b"state")
    assert log.entries(31, 50) == entries(31, 50)


def test_one_sync_covers_many_appends(tmp_path: Path) -> None:
    log = DurableLog.open(tmp_path)
    for i in range(1, 101):
        log.append(entries(i, i + 1))
    log.sync()
    log.sync()  # nothing new: no second fdatasync
    assert log.syncs == 1


def test_a_conflicting_suffix_is_replaced_on_disk(tmp_path: Path) -> None:
    log = DurableLog.open(tmp_path, segment_bytes=200)  # several segments
    log.append(entries(1, 30, term=1))
    log.sync()
    log.append(entries(12, 20, term=2))  # a new leader's entries from index 12
    log.sync()
    log = reopen(log, segment_bytes=200)
    assert log.last_index() == 19
    assert [e.term for e in log.entries(1, 20)] == [1] * 11 + [2] * 8


def test_a_torn_last_frame_is_cut_on_open(tmp_path: Path) -> None:
    log = DurableLog.open(tmp_path)
    log.append(entries(1, 10))
    log.sync()
    log.close()
    last = segments(tmp_path)[-1]
    with open(last, "r+b") as f:
        f.truncate(last.stat().st_size - 3)  # a crash in the middle of the last write
    log = DurableLog.open(tmp_path)
    assert log.last_index() == 8 and log.truncated_tail_bytes > 0
    log.append(entries(9, 12))
    log.sync()
    assert reopen(log).entries(1, 12) == entries(1, 12)


def test_a_flipped_bit_in_the_tail_is_cut_and_elsewhere_refused(tmp_path: Path) -> None:
    log = DurableLog.open(tmp_path, segment_bytes=150)
    log.append(entries(1, 20))
    log.sync()
    log.close()
    first, last = segments(tmp_path)[0], segments(tmp_path)[-1]
    data = bytearray(last.read_bytes())
    data[-2] ^= 0x01
    last.write_bytes(bytes(data))
    log = DurableLog.open(tmp_path, segment_bytes=150)
    assert log.last_index() == 18  # the damaged last entry is gone, nothing else
    log.close()
    data = bytearray(first.read_bytes())
    data[20] ^= 0x01
    first.write_bytes(bytes(data))
    with pytest.raises(CorruptStorage, match="not the tail"):
        DurableLog.open(tmp_path, segment_bytes=150)


def test_a_damaged_hard_state_is_refused_not_reset(tmp_path: Path) -> None:
    log = DurableLog.open(tmp_path)
    log.set_hard_state(HardState(7, 1, 0))
    log.close()
    path = tmp_path / "hard-state"
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptStorage, match="hard-state"):
        DurableLog.open(tmp_path)


def test_a_leader_snapshot_over_a_diverged_log_empties_it(tmp_path: Path) -> None:
    log = DurableLog.open(tmp_path)
    log.append(entries(1, 10, term=1))
    log.sync()
    log.apply_snapshot(Snapshot(20, 3, b"s"))  # beyond the log: nothing here survives
    log.append(entries(21, 23, term=3))
    log.sync()
    log = reopen(log)
    assert log.first_index() == 21 and log.last_index() == 22 and log.term(20) == 3


def test_old_segments_go_once_a_snapshot_covers_them(tmp_path: Path) -> None:
    log = DurableLog.open(tmp_path, segment_bytes=100)
    log.append(entries(1, 40))
    log.sync()
    before = len(segments(tmp_path))
    log.apply_snapshot(Snapshot(35, 1, b"s"))
    assert len(segments(tmp_path)) < before
    assert reopen(log, segment_bytes=100).entries(36, 40) == entries(36, 40)


def test_a_full_disk_is_a_typed_stop_and_keeps_synced_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = DurableLog.open(tmp_path)
    log.append(entries(1, 5))
    log.sync()
    real_write = os.write

    def full(fd: int, data: bytes) -> int:
        real_write(fd, bytes(data)[:5])  # a partial frame, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(disk_io, "write", full)
    with pytest.raises(StorageFull):
        log.append(entries(5, 6))
    monkeypatch.undo()
    log = reopen(log)
    assert log.entries(1, 5) == entries(1, 5) and log.truncated_tail_bytes == 0


def test_it_behaves_like_memory_storage_under_random_operations(tmp_path: Path) -> None:
    for seed in range(30):
        rng = random.Random(seed)
        directory = tmp_path / str(seed)
        disk, memory = (
            DurableLog.open(directory, segment_bytes=rng.choice([80, 300, 5000])),
            MemoryStorage(),
        )
        term = 1
        for _ in range(40):
            action = rng.random()
            if action < 0.6 or disk.last_index() < disk.first_index():
                lo = rng.randint(
                    max(disk.first_index(), disk.last_index() - 3), disk.last_index() + 1
                )
                term += rng.random() < 0.3
                batch = entries(lo, lo + rng.randint(1, 5), term)
                disk.append(batch)
                memory.append(batch)
                disk.sync()
            elif action < 0.8:
                at = rng.randint(disk.first_index(), disk.last_index())
                snap = Snapshot(at, disk.term(at), b"x")
                disk.apply_snapshot(snap)
                memory.apply_snapshot(snap)
            else:
                disk = reopen(disk, segment_bytes=disk._segment_bytes)
            assert (disk.first_index(), disk.last_index()) == (
                memory.first_index(),
                memory.last_index(),
            ), seed
            assert disk.entries(disk.first_index(), disk.last_index() + 1) == memory.entries(
                memory.first_index(), memory.last_index() + 1
            ), seed
        disk.close()


def test_the_frame_decoder_never_raises_on_garbage() -> None:
    rng = random.Random(1)
    good = b"".join(encode_frame(e) for e in entries(1, 5))
    assert [e for _, e in decode_frames(good)[0]] == entries(1, 5)
    for _ in range(2000):
        data = bytearray(good)
        for _ in range(rng.randint(1, 5)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        frames, end = decode_frames(bytes(data[: rng.randint(0, len(data))]))
        assert end <= len(data) and all(isinstance(e, LogEntry) for _, e in frames)


def test_a_directory_draws_its_id_once_and_a_wiped_one_draws_another(tmp_path: Path) -> None:
    first = DurableLog.open(tmp_path / "raft")
    assert len(first.directory_id) == 32
    first.close()
    assert DurableLog.open(tmp_path / "raft").directory_id == first.directory_id
    shutil.rmtree(tmp_path / "raft")
    assert DurableLog.open(tmp_path / "raft").directory_id != first.directory_id
    (tmp_path / "raft" / "directory-id").write_bytes(b"\x00\x00\x00\x00junk")
    with pytest.raises(BadDirectoryId, match="not a directory id"):
        DurableLog.open(tmp_path / "raft")


def test_state_written_before_directory_ids_still_opens(tmp_path: Path) -> None:
    log = DurableLog.open(tmp_path)
    log._write_checked("hard-state", cbor2.dumps([2, 1, 0]))  # term, vote, commit
    log._write_checked("snapshot", cbor2.dumps([0, 0, b""]))  # index, term, data
    log.close()
    reopened = DurableLog.open(tmp_path)
    assert reopened.hard_state() == HardState(2, 1, 0, "")
    assert reopened.snapshot().voters == b""
