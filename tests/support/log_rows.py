"""Reading a partition log back as rows, for the compaction tests (thread and child-process
cleans alike): every record's offset, key and value, and the latest row per key."""

from __future__ import annotations

from rillet.partition_store.log import PartitionLog
from rillet.wire.batch import decode_records, iter_batches

Row = tuple[int, bytes | None, bytes | None]


def read_all(log: PartitionLog) -> list[Row]:
    rows: list[Row] = []
    offset = log.log_start_offset
    while offset < log.log_end_offset:
        data = log.read_bytes(offset, 1 << 20)
        for view in iter_batches(data, 1 << 31):
            rows += [(r.offset, r.key, r.value) for r in decode_records(data, view.position)]
            offset = view.header.next_offset
    return rows


def latest_per_key(rows: list[Row]) -> dict[bytes | None, Row]:
    return {row[1]: row for row in rows}
