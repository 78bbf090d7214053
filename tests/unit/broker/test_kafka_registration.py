"""A broker's Kafka listener travels with its registration, through records and snapshots."""

from __future__ import annotations

import cbor2

from rillet.metadata_quorum.records import RegisterBroker, decode_record, encode_record
from rillet.metadata_quorum.state import MetadataState


def test_the_kafka_endpoint_survives_the_record_and_the_snapshot() -> None:
    record = RegisterBroker(1, "inc", "h", 9000, "r1", "kh", 9093)
    assert decode_record(encode_record(record)) == record
    state = MetadataState()
    state.apply(1, record)
    again = MetadataState.from_snapshot(state.to_snapshot())
    b = again.brokers[1]
    assert (b.kafka_host, b.kafka_port, b.host, b.port, b.rack) == ("kh", 9093, "h", 9000, "r1")


def test_records_and_snapshots_written_before_kafka_listeners_still_load() -> None:
    old = RegisterBroker(2, "inc", "h", 9000)
    doc = cbor2.loads(encode_record(old))
    del doc["body"]["kafka_host"], doc["body"]["kafka_port"]
    assert decode_record(cbor2.dumps(doc)).kafka_port == -1
    state = MetadataState()
    state.apply(1, old)
    snapshot = cbor2.loads(state.to_snapshot())
    snapshot["brokers"] = [row[:7] for row in snapshot["brokers"]]
    loaded = MetadataState.from_snapshot(cbor2.dumps(snapshot))
    assert (loaded.brokers[2].kafka_host, loaded.brokers[2].kafka_port) == ("", -1)
