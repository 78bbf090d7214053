"""Seeded power cuts of a partition log on real files (the LazyDisk layer), for a test and a
sweep: appends of random sizes, segment rolls, flushes and clean reopens drawn by the seed,
then a cut at a drawn moment. Afterwards the log must reopen, hold a prefix of what was
appended (nothing invented, nothing out of place) and keep at least its recovery point
(everything a flush made durable)."""

from __future__ import annotations

import random
from pathlib import Path

from rillet.chaos.lazy_disk import LazyDisk
from rillet.partition_store.config import LogConfig
from rillet.partition_store.log import PartitionLog
from rillet.wire import disk_io
from rillet.wire.batch import build_batch, decode_records, iter_batches

T0 = 1_700_000_000_000
_REAL = {name: getattr(disk_io, name) for name in disk_io._NAMES}


def _open(directory: Path) -> PartitionLog:
    config = LogConfig(segment_bytes=1_500, index_interval_bytes=100)
    return PartitionLog.open(directory, config, T0, "t", 0)


def _values(log: PartitionLog) -> list[bytes | None]:
    out: list[bytes | None] = []
    while len(out) < log.log_end_offset:
        data = log.read_bytes(len(out), 1 << 20)
        got = [
            r.value for v in iter_batches(data, 1 << 31) for r in decode_records(data, v.position)
        ]
        if not got:
            break
        out += got
    return out


def run_seed(seed: int, work: Path) -> str | None:
    """One seeded run; None when the log kept what it must, else what went wrong."""
    rng = random.Random(seed)
    work.mkdir(parents=True)
    directory = work / "data" / "t-0"
    layer = LazyDisk(work / "data", work / "graveyard")
    disk_io.install(layer)
    written: list[bytes | None] = []
    try:
        log = _open(directory)
        log.start_leader_epoch(1)
        for step in range(rng.randint(5, 120)):
            action = rng.random()
            if action < 0.8:
                values = [b"s%d-%d-%d" % (seed, step, i) for i in range(rng.randint(1, 6))]
                log.append_as_leader(build_batch([(T0, None, v, None) for v in values]), 1, T0)
                written += values
            elif action < 0.95:
                log.flush()
            else:
                log.close()
                log = _open(directory)
        floor = log.recovery_point
        layer.lose_unsynced()
    finally:
        for name, fn in _REAL.items():
            setattr(disk_io, name, fn)
    log = _open(directory)
    try:
        kept = _values(log)
    finally:
        log.close()
    if kept != written[: len(kept)]:
        return f"seed {seed}: the log does not hold a prefix of what was appended"
    if len(kept) < floor:
        return f"seed {seed}: {len(kept)} records kept, below the recovery point {floor}"
    return None
