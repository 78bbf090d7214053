"""Transaction markers are Kafka's control batches: kafka-python's reader is the oracle."""

from __future__ import annotations

import pytest
from kafka.record.default_records import DefaultRecordBatch

from rillet.wire.batch import build_batch
from rillet.wire.control_batch import ControlType, Marker, encode_marker, read_marker
from rillet.wire.errors import CorruptBatch


@pytest.mark.parametrize("kind", list(ControlType))
def test_kafka_python_reads_our_marker(kind: ControlType) -> None:
    data = encode_marker(Marker(7, 2, kind, 9), 1000)
    oracle = DefaultRecordBatch(data)
    assert oracle.validate_crc()
    assert (oracle.is_control_batch, oracle.is_transactional) == (True, True)
    assert (oracle.producer_id, oracle.producer_epoch, oracle.base_sequence) == (7, 2, -1)
    (record,) = list(oracle)
    assert (record.version, record.type) == (0, int(kind))
    assert read_marker(data) == Marker(7, 2, kind, 9)


def test_a_control_record_of_another_type_is_not_a_marker() -> None:
    other = build_batch([(0, b"\x00\x00\x00\x05", b"\x00\x00\x00\x00\x00\x01", None)])
    assert read_marker(other) is None


def test_a_control_record_without_a_key_is_corrupt() -> None:
    with pytest.raises(CorruptBatch, match="without a key"):
        read_marker(build_batch([(0, None, b"v", None)]))
