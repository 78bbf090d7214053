"""The sparse index files on their own: entry formats, lookups and the load-time checks."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from rillet.partition_store.sparse_index import IndexCorrupt, OffsetIndex, TimeIndex


def test_offset_index_entries_are_8_byte_big_endian_and_reload(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000000.index"
    index = OffsetIndex(path, fresh=True)
    for relative, position in [(0, 0), (10, 4100), (25, 8300)]:
        index.append(relative, position)
    index.sync()
    index.close()
    assert path.read_bytes() == struct.pack(">IIIIII", 0, 0, 10, 4100, 25, 8300)
    again = OffsetIndex(path, fresh=False)
    again.load()
    assert list(again.keys) == [0, 10, 25] and list(again.values) == [0, 4100, 8300]
    assert again.lookup(0) == (0, 0)
    assert again.lookup(9) == (0, 0)
    assert again.lookup(10) == (10, 4100)
    assert again.lookup(10**6) == (25, 8300)
    assert again.count_below(10) == 1 and again.count_below(11) == 2
    again.check(log_size=9000)
    with pytest.raises(IndexCorrupt):
        again.check(log_size=8300)  # the last entry must point inside the log
    with pytest.raises(IndexCorrupt):
        again.check(log_size=0)
    again.truncate_entries(1)
    assert path.stat().st_size == 8
    again.close()


def test_time_index_entries_are_12_bytes_and_only_grow(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000000.timeindex"
    index = TimeIndex(path, fresh=True)
    index.maybe_append(1000, 0)
    index.maybe_append(1000, 3)  # not larger: skipped
    index.maybe_append(900, 4)
    index.maybe_append(1500, 7)
    assert not path.exists() and index.pending == 2  # created and written at a flush
    index.write_pending()
    assert path.read_bytes() == struct.pack(">qIqI", 1000, 0, 1500, 7)
    assert index.last_offset_below(1000) is None
    assert index.last_offset_below(1001) == 0
    assert index.last_offset_below(10**9) == 7
    assert index.last_entry() == (1500, 7)
    assert index.count_below(7) == 1
    index.close()


@pytest.mark.parametrize(
    "content",
    [
        b"\x00" * 7,  # not a whole entry
        struct.pack(">IIII", 0, 0, 0, 0),  # keys not increasing
        struct.pack(">IIII", 0, 100, 5, 50),  # positions going backwards
    ],
)
def test_malformed_offset_index_files_are_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "x.index"
    path.write_bytes(content)
    index = OffsetIndex(path, fresh=False)
    with pytest.raises(IndexCorrupt):
        index.load()
    index.close()


def test_an_offset_index_must_start_with_the_first_batch(tmp_path: Path) -> None:
    path = tmp_path / "x.index"
    path.write_bytes(struct.pack(">II", 3, 100))
    index = OffsetIndex(path, fresh=False)
    index.load()
    with pytest.raises(IndexCorrupt):
        index.check(log_size=1000)
    index.close()
    empty = OffsetIndex(tmp_path / "y.index", fresh=True)
    with pytest.raises(IndexCorrupt):
        empty.check(log_size=1000)  # a non-empty log always has at least one entry
    empty.check(log_size=0)
    empty.close()


def test_an_index_holds_no_descriptor_and_writes_what_is_pending(tmp_path: Path) -> None:
    """10,000 partitions took three descriptors each (log and both indexes) and ran a node
    out of open files (EMFILE at its 20,000 limit): an index now opens its file only to
    write the pending entries, to fsync, or to cut it."""
    import os

    before = len(os.listdir("/proc/self/fd"))
    indexes = [OffsetIndex(tmp_path / f"{i:020d}.index", fresh=True) for i in range(50)]
    assert len(os.listdir("/proc/self/fd")) == before
    index = indexes[0]
    index.append(0, 0)
    index.append(4, 4096)
    fd = index.dup_fd()  # a flush: pending entries first, then a descriptor to fsync
    os.fsync(fd)
    os.close(fd)
    assert index.path.read_bytes() == struct.pack(">IIII", 0, 0, 4, 4096)
    index.append(9, 8192)
    index.truncate_entries(1)  # below what the file holds: the file is cut too
    assert index.path.read_bytes() == struct.pack(">II", 0, 0) and index.pending == 0
    index.append(3, 2000)
    index.renamed(index.path.with_name("moved.index"))
    index.path.parent.joinpath("00000000000000000000.index").rename(index.path)
    index.sync()
    assert index.path.read_bytes() == struct.pack(">IIII", 0, 0, 3, 2000)
    assert not (tmp_path / "00000000000000000000.index").exists()
