"""The metadata state machine: records round-trip, apply is deterministic, and replaying the
log equals restoring a snapshot and replaying the rest."""

from __future__ import annotations

import random

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_quorum import SimCluster

from rillet.metadata_quorum.errors import MetadataRecordError, SnapshotError
from rillet.metadata_quorum.records import (
    FenceBroker,
    MetadataRecord,
    PartitionChange,
    PartitionRecord,
    ProducerIds,
    RegisterBroker,
    RemoveTopic,
    TopicConfigsRecord,
    TopicRecord,
    UnfenceBroker,
    UnregisterBroker,
    decode_entry,
    decode_record,
    encode_entry,
    encode_record,
)
from rillet.metadata_quorum.state import MetadataState

ids = st.integers(0, 4)
topic_ids = st.sampled_from(["ta", "tb", "tc"])
records: st.SearchStrategy[MetadataRecord] = st.one_of(
    st.builds(
        RegisterBroker,
        ids,
        st.sampled_from(["i1", "i2"]),
        st.just("h"),
        st.integers(1, 9),
        st.one_of(st.none(), st.just("r1")),
    ),
    st.builds(FenceBroker, ids, st.integers(0, 30)),
    st.builds(UnfenceBroker, ids, st.integers(0, 30)),
    st.builds(UnregisterBroker, ids, st.integers(0, 30)),
    st.builds(
        TopicRecord,
        st.sampled_from(["a", "b", "c"]),
        topic_ids,
        st.dictionaries(st.just("retention.ms"), st.just("5")),
    ),
    st.builds(
        PartitionRecord,
        topic_ids,
        st.integers(0, 2),
        st.lists(ids, max_size=3),
        st.lists(ids, max_size=3),
        st.integers(-1, 4),
    ),
    st.builds(
        PartitionChange,
        topic_ids,
        st.integers(0, 2),
        st.one_of(st.none(), ids),
        st.one_of(st.none(), st.lists(ids, max_size=3)),
    ),
    st.builds(RemoveTopic, topic_ids),
    st.builds(
        TopicConfigsRecord,
        topic_ids,
        st.dictionaries(st.sampled_from(["retention.ms", "segment.bytes"]), st.just("7")),
    ),
    st.builds(ProducerIds, ids, st.integers(0, 10_000), st.integers(1, 1000)),
)


@settings(max_examples=200, deadline=None)
@given(record=records)
def test_records_round_trip(record: MetadataRecord) -> None:
    assert decode_record(encode_record(record)) == record


@settings(max_examples=100, deadline=None)
@given(batch=st.lists(records, min_size=1, max_size=8))
def test_entries_round_trip_and_apply_atomically(batch: list[MetadataRecord]) -> None:
    assert decode_entry(encode_entry(batch)) == batch
    one_by_one, as_entry = MetadataState(), MetadataState()
    for r in batch:
        one_by_one.apply(one_by_one.last_applied_index + 1, r)
    as_entry.apply_entry(1, decode_entry(encode_entry(batch)))
    # Same registries (broker epochs differ: every record of an entry shares its index).
    assert sorted(as_entry.topic_ids) == sorted(one_by_one.topic_ids)
    assert as_entry.partitions.keys() == one_by_one.partitions.keys()
    assert as_entry.last_applied_index == 1


def test_an_entry_holds_at_least_one_record() -> None:
    import cbor2

    with pytest.raises(MetadataRecordError):
        encode_entry([])
    with pytest.raises(MetadataRecordError, match="empty"):
        decode_entry(cbor2.dumps([]))


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=100))
def test_garbage_is_a_typed_error(data: bytes) -> None:
    for decode in (decode_record, decode_entry):
        try:
            decode(data)
        except MetadataRecordError:
            pass


def test_unknown_type_and_version_are_refused() -> None:
    import cbor2

    with pytest.raises(MetadataRecordError, match="type"):
        decode_record(cbor2.dumps({"type": 99, "version": 1, "body": {}}))
    with pytest.raises(MetadataRecordError, match="version"):
        decode_record(cbor2.dumps({"type": 1, "version": 7, "body": {}}))
    with pytest.raises(MetadataRecordError, match="malformed"):
        decode_record(cbor2.dumps({"type": 1, "version": 1, "body": {"broker_id": "x"}}))


@settings(max_examples=150, deadline=None)
@given(log=st.lists(records, max_size=60), cut=st.floats(0, 1))
def test_replay_equals_snapshot_then_replay(log: list[MetadataRecord], cut: float) -> None:
    full = MetadataState()
    for i, r in enumerate(log, 1):
        full.apply(i, decode_record(encode_record(r)))
    k = int(cut * len(log))
    prefix = MetadataState()
    for i, r in enumerate(log[:k], 1):
        prefix.apply(i, r)
    restored = MetadataState.from_snapshot(prefix.to_snapshot())
    assert restored.to_snapshot() == prefix.to_snapshot()
    for i, r in enumerate(log[k:], k + 1):
        restored.apply(i, r)
    assert restored.to_snapshot() == full.to_snapshot()


@settings(max_examples=150, deadline=None)
@given(log=st.lists(records, max_size=60), cut=st.floats(0, 1))
def test_a_topic_s_partitions_are_indexed_in_step(log: list[MetadataRecord], cut: float) -> None:
    """partitions_of and pending_topic_ids answer from a per-topic index (no scan of the
    whole cluster's partitions); through any records, and after a snapshot restore, they
    say what a scan of ``partitions`` says."""
    state = MetadataState()
    k = int(cut * len(log))
    for i, r in enumerate(log, 1):
        state.apply(i, r)
        if i == k:
            state = MetadataState.from_snapshot(state.to_snapshot())
        for topic_id in ("ta", "tb", "tc"):
            scanned = {p: s for (t, p), s in state.partitions.items() if t == topic_id}
            assert state.partitions_of(topic_id) == scanned
        scanned_pending = sorted({t for t, _ in state.partitions if t not in state.topics})
        assert state.pending_topic_ids() == scanned_pending


def test_broker_lifecycle_is_fenced_by_epoch() -> None:
    s = MetadataState()
    s.apply(1, RegisterBroker(1, "inc-a", "127.0.0.1", 9001))
    assert s.brokers[1].broker_epoch == 1 and s.brokers[1].fenced
    s.apply(2, UnfenceBroker(1, 1))
    assert s.unfenced_brokers() == [1]
    s.apply(3, RegisterBroker(1, "inc-b", "127.0.0.1", 9001))  # restarted: new epoch 3
    s.apply(4, UnfenceBroker(1, 3))
    s.apply(5, FenceBroker(1, 1))  # stale epoch: ignored
    assert not s.brokers[1].fenced
    s.apply(6, FenceBroker(1, 3))
    assert s.brokers[1].fenced and s.unfenced_brokers() == []
    s.apply(7, UnregisterBroker(1, 3))
    assert 1 not in s.brokers
    with pytest.raises(ValueError):
        s.apply(7, FenceBroker(1, 3))


def test_partition_changes_bump_epochs() -> None:
    s = MetadataState()
    s.apply(1, TopicRecord("orders", "t1"))
    s.apply(2, PartitionRecord("t1", 0, [1, 2, 3], [1, 2, 3], 1))
    s.apply(3, PartitionChange("t1", 0, isr=[1, 2]))
    p = s.partitions[("t1", 0)]
    assert (p.leader, p.leader_epoch, p.partition_epoch, p.isr) == (1, 0, 1, (1, 2))
    s.apply(4, PartitionChange("t1", 0, leader=2, isr=[2]))
    p = s.partitions[("t1", 0)]
    assert (p.leader, p.leader_epoch, p.partition_epoch, p.isr) == (2, 1, 2, (2,))
    s.apply(5, PartitionChange("t1", 0, leader=-1))
    assert s.leaderless_partitions() == [("t1", 0)]
    s.apply(6, TopicRecord("orders", "t2"))  # a second topic of the same name: ignored
    assert s.topic_by_name("orders") is not None and s.topic_ids["orders"] == "t1"
    s.apply(7, RemoveTopic("t1"))
    assert s.topic_by_name("orders") is None and s.partitions == {}


def test_corrupt_snapshot_is_a_typed_error() -> None:
    with pytest.raises(SnapshotError):
        MetadataState.from_snapshot(b"\x00garbage")


async def test_every_member_derives_identical_state_from_the_committed_stream() -> None:
    cluster = SimCluster([1, 2, 3], random.Random(3))
    leader = cluster.member(1)
    await leader.propose(encode_record(RegisterBroker(1, "a", "h", 1)))
    await leader.propose(encode_record(TopicRecord("t", "id-t")))
    await leader.propose(encode_record(PartitionRecord("id-t", 0, [1], [1], 1)))
    cluster.elect(2)
    await cluster.member(2).propose(encode_record(PartitionChange("id-t", 0, leader=-1)))
    snapshots = set()
    for member in cluster.members.values():
        state = MetadataState()
        with trio.fail_after(1):
            for entry in await member.read_committed(0):
                state.apply(entry.index, decode_record(entry.data))
        snapshots.add(state.to_snapshot())
    assert len(snapshots) == 1
