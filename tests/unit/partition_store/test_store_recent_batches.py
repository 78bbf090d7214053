"""Reads at the log end find their batch among the segment's last appends (no file read),
and agree with the offset index everywhere, through cuts and re-appends."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from store_batches import T0, batch, open_log, records_of

from rillet.partition_store.log import PartitionLog
from rillet.partition_store.recent_batches import RECENT_BATCHES, RecentBatches
from rillet.wire import disk_io
from rillet.wire.batch import iter_batches


def test_find_covers_the_remembered_batches_only() -> None:
    recent = RecentBatches()
    assert recent.find(0) is None
    for base in range(0, 3 * RECENT_BATCHES, 3):  # batches of 3 offsets each
        recent.appended(base, base + 3, base * 100)
    assert len(recent) == RECENT_BATCHES
    oldest = 0  # the first of exactly RECENT_BATCHES appended: still remembered
    assert recent.find(oldest) is not None
    last = 3 * RECENT_BATCHES - 3
    hit = recent.find(last + 2)
    assert hit is not None and (hit.base_offset, hit.next_offset, hit.position) == (
        last,
        last + 3,
        last * 100,
    )
    assert recent.find(last + 3) is None  # past the end: the file decides
    recent.appended(last + 3, last + 6, 1)
    assert recent.find(oldest) is None  # forgotten: older than every remembered batch
    recent.forget()
    assert recent.find(last + 4) is None


def test_a_read_at_the_log_end_reads_no_headers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = open_log(tmp_path / "t-0", index_interval_bytes=64)
    for i in range(20):
        log.append_as_leader(batch([b"v%d" % i] * 3), 0, T0)
    preads: list[int] = []
    real_pread = os.pread

    def counting_pread(fd: int, n: int, offset: int) -> bytes:
        preads.append(n)
        return real_pread(fd, n, offset)

    monkeypatch.setattr(disk_io, "pread", counting_pread)
    result = log.read(57, 1 << 20)  # inside the last batch: a follower's or tail's fetch
    assert result.region is not None and not preads
    monkeypatch.undo()
    assert [o for o, _ in records_of(log.read_bytes(57, 1 << 20))] == [57, 58, 59]


def test_reads_agree_with_the_index_through_cuts(tmp_path: Path) -> None:
    """Random appends, truncations and reads near the end: every read finds the same bytes
    as the same read through the offset index (``recheck`` skips the remembered batches),
    and a read up to a high watermark stops at it."""
    rng = random.Random(2026)
    log = open_log(tmp_path / "t-0", segment_bytes=4096, index_interval_bytes=200)
    for step in range(300):
        starts = _batch_starts(log)
        if rng.random() < 0.1 and len(starts) > 1:
            log.truncate_to(rng.choice(starts[1:]))
        else:
            n = rng.randint(1, 4)
            log.append_as_leader(batch([bytes(rng.randint(1, 300))] * n), 0, T0 + step)
        end = log.log_end_offset
        offset = rng.randrange(max(0, end - 10), end)
        found = log.read(offset, 1 << 20).region
        indexed = log.read(offset, 1 << 20, recheck=True).region
        assert found is not None and indexed is not None
        assert (found.position, found.length) == (indexed.position, indexed.length)
        high_watermark = rng.choice([s for s in starts if s > offset] + [end])
        below = [o for o, _ in records_of(log.read_bytes(offset, 1 << 20, high_watermark))]
        whole = [o for o, _ in records_of(log.read_bytes(offset, 1 << 20))]
        assert below == [o for o in whole if o < high_watermark]


def _batch_starts(log: PartitionLog) -> list[int]:
    """Every batch's base offset, segment by segment (a read stays within one)."""
    starts: list[int] = []
    offset = log.log_start_offset
    while offset < log.log_end_offset:
        for view in iter_batches(log.read_bytes(offset, 1 << 30), 1 << 31):
            starts.append(view.header.base_offset)
            offset = view.header.next_offset
    return starts
