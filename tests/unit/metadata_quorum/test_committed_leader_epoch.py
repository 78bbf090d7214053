"""A committed offset keeps its leader epoch (Kafka's committed_leader_epoch), from
OffsetCommit and from a committed transaction's TxnOffsetCommit; records and snapshots
written before it was kept still load, with -1."""

from __future__ import annotations

import cbor2

from rillet.metadata_quorum.group_records import CommittedOffset, OffsetsCommitted
from rillet.metadata_quorum.group_registry import GroupRegistry, OffsetEntry
from rillet.metadata_quorum.records import decode_record, encode_record
from rillet.metadata_quorum.txn_coordinator import _group_offsets
from rillet.metadata_quorum.txn_registry import TxnOffset


def test_the_epoch_round_trips_through_the_offsets_record() -> None:
    record = OffsetsCommitted("g", [CommittedOffset("tid", 0, 5, "", 1, leader_epoch=3)])
    assert decode_record(encode_record(record)) == record


def test_an_offsets_record_without_the_epoch_decodes_with_minus_one() -> None:
    raw = cbor2.loads(encode_record(OffsetsCommitted("g", [CommittedOffset("tid", 0, 5)])))
    for offset in raw["body"]["offsets"]:
        offset.pop("leader_epoch", None)  # as written before the field existed
    decoded = decode_record(cbor2.dumps(raw))
    assert isinstance(decoded, OffsetsCommitted)
    assert decoded.offsets[0].leader_epoch == -1


def test_the_registry_keeps_the_epoch_and_old_snapshots_load() -> None:
    registry = GroupRegistry()
    registry.apply(OffsetsCommitted("g", [CommittedOffset("tid", 0, 5, "m", 1, 4)]))
    assert registry.offsets["g"][("tid", 0)] == OffsetEntry(5, "m", 1, 4)
    doc = registry.to_doc()
    assert GroupRegistry.from_doc(doc).offsets == registry.offsets
    old = {"groups": [], "offsets": [["g", [["tid", 0, 5, "m", 1]]]]}  # five fields
    assert GroupRegistry.from_doc(old).offsets["g"][("tid", 0)].leader_epoch == -1


def test_a_committed_transaction_applies_its_offsets_with_their_epoch() -> None:
    (committed,) = _group_offsets([TxnOffset("g", "t", 0, 9, "", leader_epoch=0)], 7, {"t": "tid"})
    assert committed.offsets == [CommittedOffset("tid", 0, 9, "", 7, 0)]
