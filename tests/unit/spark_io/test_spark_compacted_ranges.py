"""The Spark reader over a compacted log: offsets with gaps (empty batches), tombstones with
a delete horizon, rows at their original offsets and timestamps."""

from __future__ import annotations

import pytest

pa = pytest.importorskip("pyarrow")

from rillet.client.fetch_decoder import whole_batches  # noqa: E402
from rillet.partition_store.batch_cleaning import BatchCleaner  # noqa: E402
from rillet.spark_io.arrow_records import RecordColumns  # noqa: E402
from rillet.wire.batch import assign_offset_and_epoch, build_batch  # noqa: E402

T0 = 1_700_000_000_000


def test_a_cleaned_range_reads_with_gaps_and_original_timestamps() -> None:
    batches = []
    for base, records in ((0, [(b"a", b"1"), (b"b", b"2")]), (2, [(b"a", b"3"), (b"b", None)])):
        data = bytearray(
            build_batch([(T0 + base + i, k, v, None) for i, (k, v) in enumerate(records)])
        )
        assign_offset_and_epoch(data, 0, base, 0)
        batches.append(bytes(data))
    cleaner = BatchCleaner({b"a": 2, b"b": 3}, T0, T0 + 10_000)
    log = b"".join([*cleaner.clean(batches), *cleaner.finish()])
    found, next_offset = whole_batches(log, 0, "t-0")
    assert next_offset == 4  # the reader moves past the gap of offsets 0 and 1
    columns = RecordColumns("t", 0, include_headers=False)
    for position, header in found:
        columns.add_batch(log, position, header, 0, 4)
    rows = columns.take().to_pydict()
    assert rows["offset"] == [2, 3]
    assert rows["key"] == [b"a", b"b"] and rows["value"] == [b"3", None]
    assert [t.timestamp() * 1000 for t in rows["timestamp"]] == [T0 + 2, T0 + 3]
