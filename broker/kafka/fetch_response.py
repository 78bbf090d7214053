"""Fetch responses v4-11, encoded by hand so records leave as file regions (sendfile).

kio would need the records in memory; this encoder writes the few fixed fields with struct
and leaves each partition's records as the region the log returned. The layout is Kafka's
FetchResponse schema for these versions; tests check it against kio and kafka-python.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from rillet.broker.kafka.error_map import kafka_error
from rillet.wire.frame import BlobPart, FileRegion

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_TOP_V7 = struct.Struct(">ihi")  # throttle_time_ms, error_code, session_id
_PARTITION_HEAD = struct.Struct(">ihqq")  # index, error_code, high_watermark, last_stable
_I64 = struct.Struct(">q")
_ABORTED = struct.Struct(">qq")  # producer_id, first_offset
NO_PREFERRED_REPLICA = -1


@dataclass(frozen=True, slots=True)
class FetchedPartition:
    partition: int
    error_code: int
    high_watermark: int
    log_start_offset: int
    records: BlobPart
    last_stable_offset: int = -1  # -1: the high watermark
    aborted_transactions: list[tuple[int, int]] = field(default_factory=list)  # (pid, first)


def encode_fetch_body(
    version: int,
    topics: list[tuple[str, list[FetchedPartition]]],
    error_code: int = 0,
    session_id: int = 0,
) -> list[BlobPart]:
    """The body of a FetchResponse of ``version`` (4 to 11): ``session_id`` from v7 (KIP-227);
    each partition's last stable offset and aborted transactions (read_committed) as given."""
    out = bytearray()
    parts: list[BlobPart] = []
    if version >= 7:
        out += _TOP_V7.pack(0, kafka_error(error_code).value, session_id)
    else:
        out += _I32.pack(0)
    out += _I32.pack(len(topics))
    for name, partitions in topics:
        encoded = name.encode()
        out += _I16.pack(len(encoded)) + encoded
        out += _I32.pack(len(partitions))
        for p in partitions:
            code = kafka_error(p.error_code).value
            lso = p.high_watermark if p.last_stable_offset < 0 else p.last_stable_offset
            out += _PARTITION_HEAD.pack(p.partition, code, p.high_watermark, lso)
            if version >= 5:
                out += _I64.pack(p.log_start_offset)
            out += _I32.pack(len(p.aborted_transactions))
            for producer_id, first_offset in p.aborted_transactions:
                out += _ABORTED.pack(producer_id, first_offset)
            if version >= 11:
                out += _I32.pack(NO_PREFERRED_REPLICA)
            records = p.records
            size = records.length if isinstance(records, FileRegion) else len(records)
            out += _I32.pack(size)
            if isinstance(records, FileRegion):
                parts.append(bytes(out))
                parts.append(records)
                out = bytearray()
            elif size:
                out += records
    if out:
        parts.append(bytes(out))
    return parts
