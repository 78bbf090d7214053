"""The console's message browser on a real partition log: pages, times, the watermark, CRC."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from rillet.broker.http.browser_view import browse_page
from rillet.broker.http.errors import HttpError
from rillet.broker.http.message_browser import BrowsePage, BrowseQuery, decode_page, read_page
from rillet.partition_store.config import LogConfig
from rillet.partition_store.log import PartitionLog
from rillet.wire.batch import build_batch

T0 = 1_700_000_000_000


@dataclass
class Replica:
    log: PartitionLog
    high_watermark: int
    deleted: bool = False


def written_log(directory: Path) -> PartitionLog:
    """Three batches of two records each (offsets 0..5), a second apart."""
    log = PartitionLog.open(directory, LogConfig(), T0, "t", 0)
    for b in range(3):
        records = [
            (T0 + 1000 * b, f"k{2 * b + i}".encode(), f"v{2 * b + i}".encode(), [("h", b"x")])
            for i in range(2)
        ]
        log.append_as_leader(build_batch(records), 0, T0)
    return log


def browse(replica: Replica | None, q: BrowseQuery, max_records: int, max_bytes: int) -> BrowsePage:
    return decode_page(read_page(replica, q, max_bytes), max_records)


def query(offset: int | None = None, timestamp_ms: int | None = None) -> BrowseQuery:
    return BrowseQuery("t", 0, offset, timestamp_ms, "text")


def test_a_page_starts_mid_batch_and_stops_at_its_record_bound(tmp_path: Path) -> None:
    log = written_log(tmp_path)
    page = browse(Replica(log, 6), query(offset=3), max_records=2, max_bytes=1 << 20)
    assert [(r.offset, r.key, r.value) for r in page.records] == [(3, "k3", "v3"), (4, "k4", "v4")]
    assert page.records[0].headers == (("h", "x"),)
    assert page.next_offset == 5 and not page.invalid_batches
    # The read stops at max_bytes (whole batches; the first one always).
    assert [r.offset for r in browse(Replica(log, 6), query(), 50, 1).records] == [0, 1]
    html = browse_page(page, ["t"], 2)
    assert "next page" in html and "offset=5" in html


def test_a_time_starts_at_the_first_batch_reaching_it(tmp_path: Path) -> None:
    log = written_log(tmp_path)
    page = browse(Replica(log, 6), query(timestamp_ms=T0 + 1500), 50, 1 << 20)
    assert [r.offset for r in page.records] == [4, 5]
    later = browse(Replica(log, 6), query(timestamp_ms=T0 + 9000), 50, 1 << 20)
    assert not later.records and later.note == "no committed record at or after that time"


def test_only_committed_records_are_shown(tmp_path: Path) -> None:
    log = written_log(tmp_path)
    page = browse(Replica(log, 4), query(), 50, 1 << 20)
    assert [r.offset for r in page.records] == [0, 1, 2, 3]


def test_a_batch_failing_its_crc_is_named_and_not_decoded(tmp_path: Path) -> None:
    log = written_log(tmp_path)
    segment = next(tmp_path.glob("*.log"))
    data = bytearray(segment.read_bytes())
    at = data.index(b"v2")
    data[at] ^= 0xFF  # rot one byte of the second batch after it was written and checked
    segment.write_bytes(bytes(data))
    page = browse(Replica(log, 6), query(), 50, 1 << 20)
    assert [r.offset for r in page.records] == [0, 1]
    assert len(page.invalid_batches) == 1 and page.invalid_batches[0].startswith("offset 2: ")
    assert "crc" in page.invalid_batches[0]
    assert "batch CRC invalid at offset 2" in browse_page(page, ["t"], 50)
    log.close()  # reopened, the log checks the batch itself and refuses to read at it
    reopened = PartitionLog.open(tmp_path, LogConfig(), T0, "t", 0)
    damaged = browse(Replica(reopened, 6), query(offset=2), 50, 1 << 20)
    assert not damaged.records and damaged.invalid_batches[0].startswith("offset 2: ")


def test_a_partition_not_hosted_here_is_a_404() -> None:
    with pytest.raises(HttpError, match="hosts no replica of t-0") as info:
        browse(None, query(), 50, 1 << 20)
    assert info.value.status == 404
