"""Transaction markers: Kafka's control batches, built and read.

A transaction ends with one control batch per partition it wrote to (KIP-98): a batch with
the transactional (bit 4) and control (bit 5) attributes, the producer's id and epoch, no
sequence, and one record whose key says what kind of marker it is and whose value carries
the coordinator epoch that wrote it. Kafka's layout, byte for byte::

    key:   version int16 (0) | type int16 (0 abort, 1 commit)
    value: version int16 (0) | coordinator_epoch int32

Consumers skip control batches; read_committed consumers use the abort markers' offsets
(through the fetch answer's aborted-transaction list) to drop the aborted batches.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum

import crc32c

from rillet.wire.batch import (
    ATTR_CONTROL,
    ATTR_TRANSACTIONAL,
    CRC_OFFSET,
    CRC_START,
    NO_SEQUENCE,
    BatchHeader,
    decode_records,
    encode_batch_from_payload,
    read_header,
)
from rillet.wire.errors import CorruptBatch
from rillet.wire.record_codec import encode_record

_KEY = struct.Struct(">hh")
_ATTRIBUTES = struct.Struct(">h")
_CRC = struct.Struct(">I")
_VALUE = struct.Struct(">hi")
CONTROL_RECORD_VERSION = 0
MARKER_ATTRIBUTES = ATTR_TRANSACTIONAL | ATTR_CONTROL


class ControlType(IntEnum):
    ABORT = 0
    COMMIT = 1


@dataclass(frozen=True, slots=True)
class Marker:
    """What a transaction marker says: its producer, how the transaction ended, and the
    coordinator epoch that decided it."""

    producer_id: int
    producer_epoch: int
    control_type: ControlType
    coordinator_epoch: int

    @property
    def committed(self) -> bool:
        return self.control_type is ControlType.COMMIT


def is_control(header: BatchHeader) -> bool:
    return bool(header.attributes & ATTR_CONTROL)


def is_transactional(header: BatchHeader) -> bool:
    return bool(header.attributes & ATTR_TRANSACTIONAL)


def mark_transactional(batch: bytes) -> bytes:
    """The batch with the transactional attribute set and its CRC recomputed (a
    transactional producer's batches carry it)."""
    raw = bytearray(batch)
    attributes = _ATTRIBUTES.unpack_from(raw, CRC_START)[0]
    _ATTRIBUTES.pack_into(raw, CRC_START, attributes | ATTR_TRANSACTIONAL)
    _CRC.pack_into(raw, CRC_OFFSET, crc32c.crc32c(memoryview(raw)[CRC_START:]))
    return bytes(raw)


def encode_marker(marker: Marker, timestamp_ms: int) -> bytes:
    """The control batch of ``marker`` (base offset 0, leader epoch -1: the leader sets both)."""
    key = _KEY.pack(CONTROL_RECORD_VERSION, int(marker.control_type))
    value = _VALUE.pack(CONTROL_RECORD_VERSION, marker.coordinator_epoch)
    return encode_batch_from_payload(
        encode_record(0, 0, key, value, None),
        record_count=1,
        first_timestamp_ms=timestamp_ms,
        max_timestamp_ms=timestamp_ms,
        attributes=MARKER_ATTRIBUTES,
        producer_id=marker.producer_id,
        producer_epoch=marker.producer_epoch,
        base_sequence=NO_SEQUENCE,
    )


def read_marker(buf: bytes | bytearray | memoryview, position: int = 0) -> Marker | None:
    """The marker of the control batch at ``position`` (CRC already checked), or None for a
    control batch of another kind (Kafka reserves other types; they are not markers).

    Raises CorruptBatch when the control record is not Kafka's layout.
    """
    header = read_header(buf, position)
    records = decode_records(buf, position)
    if not records:
        raise CorruptBatch("a control batch without a record")
    key, value = records[0].key, records[0].value
    if key is None or len(key) < _KEY.size:
        raise CorruptBatch("a control record without a key")
    _, kind = _KEY.unpack_from(key)
    if kind not in (ControlType.ABORT, ControlType.COMMIT):
        return None
    coordinator_epoch = -1
    if value is not None and len(value) >= _VALUE.size:
        coordinator_epoch = _VALUE.unpack_from(value)[1]
    return Marker(header.producer_id, header.producer_epoch, ControlType(kind), coordinator_epoch)
