"""Shared by the partition-store tests: building batches, reading them back, crashing a log.

(A uniquely named module rather than a conftest: hypothesis tests call these directly.)
"""

from __future__ import annotations

import struct
from pathlib import Path

import crc32c

from rillet.partition_store.config import LogConfig
from rillet.partition_store.log import PartitionLog
from rillet.wire.batch import (
    CRC_OFFSET,
    CRC_START,
    HEADER,
    build_batch,
    decode_records,
    iter_batches,
)
from rillet.wire.control_batch import mark_transactional

T0 = 1_700_000_000_000
TOPIC = "t"


def batch(values: list[bytes], ts: int = T0, step: int = 0) -> bytes:
    """One batch of unkeyed records, the i-th stamped ``ts + i * step``."""
    return build_batch([(ts + i * step, None, v, None) for i, v in enumerate(values)])


def set_attributes(raw: bytearray, value: int) -> None:
    """Rewrite a batch's attributes and CRC, as a Kafka client could have written them."""
    fields = list(HEADER.unpack_from(raw))
    fields[5] = value  # attributes
    HEADER.pack_into(raw, 0, *fields)
    struct.pack_into(">I", raw, CRC_OFFSET, crc32c.crc32c(raw[CRC_START:]))


def txn_batch(producer_id: int, epoch: int, sequence: int, values: list[bytes]) -> bytes:
    """A transactional producer's batch (attribute bit 4), as a Kafka client sends it."""
    return mark_transactional(
        build_batch(
            [(T0, None, v, None) for v in values],
            producer_id=producer_id,
            producer_epoch=epoch,
            base_sequence=sequence,
        )
    )


def records_of(data: bytes) -> list[tuple[int, bytes | None]]:
    """``(offset, value)`` of every record of the whole batches in ``data``."""
    return [
        (r.offset, r.value)
        for view in iter_batches(data, 1 << 31)
        for r in decode_records(data, view.position)
    ]


def open_log(directory: Path, now_ms: int = T0, **config: int) -> PartitionLog:
    return PartitionLog.open(directory, LogConfig(**config), now_ms, TOPIC, 0)


def crash(log: PartitionLog) -> None:
    """Drop the log like SIGKILL would: descriptors closed, nothing flushed, no marker.

    Bytes already written stay in the page cache, exactly as after a process crash.
    """
    log._release()
