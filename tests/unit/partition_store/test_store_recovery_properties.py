"""Crash recovery as properties.

A SIGKILL in the middle of a write leaves a prefix of the written bytes (a cut); a bad disk
or a torn page can leave garbage (a flipped byte). Either way, reopening without a clean
shutdown must keep exactly the batches wholly before the damage, byte for byte, serve
nothing at or after it, and continue appending right after the intact prefix.

Indexes are derived data: whatever happens to them, every lookup answers as before.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_batches import T0, batch, crash, open_log, records_of

from rillet.partition_store.errors import OffsetOutOfRange
from rillet.partition_store.log import PartitionLog

CONFIG = {"segment_bytes": 1500, "index_interval_bytes": 200}
EPOCH_FIELD = range(12, 16)  # outside the CRC by design; recovery checks only monotonicity


class Written(NamedTuple):
    segment: int  # base offset of its segment
    position: int
    base_offset: int
    next_offset: int
    data: bytes


def write_batches(
    directory: Path, shapes: list[tuple[int, int]]
) -> tuple[PartitionLog, list[Written]]:
    """Append one batch per ``(records, value size)``; return the log and where each went."""
    log = open_log(directory, **CONFIG)
    for i, (records, size) in enumerate(shapes):
        log.append_as_leader(batch([bytes([i % 251]) * size] * records, ts=T0 + i), 0, T0)
    written = []
    for info in log.segments():
        offset = info.base_offset
        while offset < info.next_offset:
            region = log.read(offset, 1).region
            assert region is not None
            data = log.read_bytes(offset, 1)
            end = offset + len(records_of(data))
            written.append(Written(info.base_offset, region.position, offset, end, data))
            offset = end
    return log, written


def check_survivors(directory: Path, expected: list[Written]) -> PartitionLog:
    log = open_log(directory, **CONFIG)
    end = expected[-1].next_offset if expected else 0
    assert log.log_end_offset == end
    for w in expected:
        assert log.read_bytes(w.base_offset, 1) == w.data
    with pytest.raises(OffsetOutOfRange):
        log.read(end + 1, 100)
    result = log.append_as_leader(batch([b"after"]), 0, T0)
    assert result.first_offset == end
    assert records_of(log.read_bytes(end, 1 << 20)) == [(end, b"after")]
    return log


shapes_strategy = st.lists(
    st.tuples(st.integers(1, 3), st.integers(0, 300)), min_size=1, max_size=25
)


@settings(max_examples=150, deadline=None)
@given(
    shapes=shapes_strategy,
    flushed=st.booleans(),
    flip=st.booleans(),
    where=st.floats(0, 1, exclude_max=True),
    segment_pick=st.floats(0, 1, exclude_max=True),
)
def test_cut_or_flip_at_any_byte_keeps_exactly_the_intact_prefix(
    shapes: list[tuple[int, int]], flushed: bool, flip: bool, where: float, segment_pick: float
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "t-0"
        log, written = write_batches(directory, shapes)
        segments = log.segments()
        if flushed:
            # As after a clean close whose marker was lost: only the active segment, which
            # holds the recovery point, is re-validated, so damage it.
            log.close()
            (directory / "clean-shutdown").unlink()
            target = segments[-1]
        else:
            # Nothing was ever fsynced: every segment is re-validated; damage any of them.
            crash(log)
            target = segments[int(segment_pick * len(segments))]
        size = target.size_bytes
        damage_at = int(where * size)
        if flip and size:
            in_target = [w for w in written if w.segment == target.base_offset]
            if any(damage_at - w.position in EPOCH_FIELD for w in in_target):
                damage_at = (damage_at + 4) % size
            with open(target.log_path, "r+b") as f:
                f.seek(damage_at)
                byte = f.read(1)
                f.seek(damage_at)
                f.write(bytes([byte[0] ^ 0xA5]))
        else:
            os.truncate(target.log_path, damage_at)
        expected = [
            w
            for w in written
            if w.segment < target.base_offset
            or (w.segment == target.base_offset and w.position + len(w.data) <= damage_at)
        ]
        reopened = check_survivors(directory, expected)
        assert reopened.recovery_stats.segments_recovered >= 1
        reopened.close()


class IndexDamage(NamedTuple):
    kind: str
    segment: float
    time_index: bool


damage_strategy = st.lists(
    st.builds(
        IndexDamage,
        st.sampled_from(["delete", "cut", "shorten", "garbage", "zeros", "past_end", "empty"]),
        st.floats(0, 1, exclude_max=True),
        st.booleans(),
    ),
    min_size=1,
    max_size=4,
)


def damage_index(path: Path, kind: str, entry_size: int, seed: int) -> None:
    if not path.exists():
        return  # already deleted by an earlier damage
    size = path.stat().st_size
    if kind == "delete":
        path.unlink()
    elif kind == "cut":
        os.truncate(path, max(size - 3, 0))
    elif kind == "shorten":  # whole entries lost: sparser, still valid
        os.truncate(path, max(size - entry_size, 0))
    elif kind == "garbage":
        path.write_bytes(bytes((seed * 37 + i * 101) % 256 for i in range(entry_size * 3)))
    elif kind == "zeros":  # what a power loss can leave of an unsynced file
        path.write_bytes(bytes(size + entry_size))
    elif kind == "past_end":
        with open(path, "ab") as f:
            f.write(b"\x7f" * entry_size)
    else:
        path.write_bytes(b"")


@settings(max_examples=80, deadline=None)
@given(shapes=shapes_strategy, damages=damage_strategy, clean=st.booleans())
def test_damaged_indexes_are_rebuilt_and_lookups_unchanged(
    shapes: list[tuple[int, int]], damages: list[IndexDamage], clean: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "t-0"
        log, written = write_batches(directory, shapes)
        reads = {o: log.read_bytes(o, 1) for o in range(log.log_end_offset)}
        times = [log.offset_for_timestamp(T0 + i) for i in range(-1, len(shapes) + 1)]
        segments = log.segments()
        log.close()
        if not clean:
            (directory / "clean-shutdown").unlink()
        for n, d in enumerate(damages):
            info = segments[int(d.segment * len(segments))]
            path = info.time_index_path if d.time_index else info.index_path
            damage_index(path, d.kind, 12 if d.time_index else 8, n)
        again = open_log(directory, **CONFIG)
        assert again.log_end_offset == written[-1].next_offset
        assert {o: again.read_bytes(o, 1) for o in range(again.log_end_offset)} == reads
        assert [again.offset_for_timestamp(T0 + i) for i in range(-1, len(shapes) + 1)] == times
        again.close()
        # the rebuilt indexes are whole again: the next clean open trusts every segment
        third = open_log(directory, **CONFIG)
        assert third.recovery_stats.indexes_rebuilt == 0
        assert third.recovery_stats.segments_recovered == 0
        third.close()
