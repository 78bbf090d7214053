"""The broker hosts exactly the partitions the committed metadata assigns to it, in the role
it assigns, and never serves a deleted topic's data under a recreated topic of that name."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from sim_quorum import SimCluster

from rillet.broker.config import NodeConfig
from rillet.broker.replica.partition_reconciler import PartitionReconciler
from rillet.broker.replica.replica_manager import DELETE_SUFFIX, ReplicaManager
from rillet.metadata_quorum.controller import Controller, ControllerConfig
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.entry_split import split_records
from rillet.metadata_quorum.follower import MetadataFollower
from rillet.metadata_quorum.records import PartitionChange, RegisterBroker
from rillet.metadata_quorum.state import MetadataState
from rillet.partition_store.layout import CLEAN_SHUTDOWN_FILE
from rillet.wire import disk_io
from rillet.wire.batch import build_batch

NODE = 1


def apply_all(state: MetadataState, decision: Decision) -> None:
    assert decision.error == 0, decision.message
    for record in decision.records:
        state.apply(state.last_applied_index + 1, record)


def two_brokers() -> tuple[Controller, MetadataState]:
    ctl = Controller(ControllerConfig(), random.Random(7))
    state = MetadataState()
    for b in (1, 2):
        apply_all(state, ctl.register_broker(state, RegisterBroker(b, f"i{b}", "h", b), 0))
        apply_all(state, ctl.heartbeat(state, b, state.brokers[b].broker_epoch, True, 0))
    return ctl, state


def reconciler_over(data_dir: Path) -> tuple[ReplicaManager, PartitionReconciler]:
    manager = ReplicaManager(NodeConfig(data_dir=data_dir))
    follower = MetadataFollower(SimCluster([1], random.Random(1)).member(1))
    return manager, PartitionReconciler(NODE, manager, follower)


def mine(state: MetadataState, topic: str) -> set[int]:
    t = state.topic_by_name(topic)
    assert t is not None
    return {p for p, s in state.partitions_of(t.topic_id).items() if NODE in s.replicas}


async def test_hosts_assigned_partitions_with_their_roles(tmp_path: Path) -> None:
    ctl, state = two_brokers()
    apply_all(state, ctl.create_topic(state, "t", 6, 1, {}))
    apply_all(state, ctl.create_topic(state, "r", 2, 2, {}))
    manager, reconciler = reconciler_over(tmp_path)
    await reconciler.reconcile(state)
    hosted = {(k.topic, k.partition) for k in manager.hosted()}
    assert hosted == {("t", p) for p in mine(state, "t")} | {("r", 0), ("r", 1)}
    r = state.topic_by_name("r")
    assert r is not None
    for p, s in state.partitions_of(r.topic_id).items():
        replica = manager.get("r", p)
        assert replica is not None
        assert replica.is_leader == (s.leader == NODE) and replica.leader_epoch == s.leader_epoch
    # Leadership moves away: the replica follows, with the new epoch.
    led = next(p for p, s in state.partitions_of(r.topic_id).items() if s.leader == NODE)
    state.apply(state.last_applied_index + 1, PartitionChange(r.topic_id, led, 2, None))
    await reconciler.reconcile(state)
    replica = manager.get("r", led)
    assert replica is not None and not replica.is_leader and replica.leader_epoch == 1
    await manager.close_all()


async def test_a_recreated_topic_never_serves_the_deleted_ones_data(tmp_path: Path) -> None:
    ctl, state = two_brokers()
    apply_all(state, ctl.create_topic(state, "t", 2, 2, {}))
    manager, reconciler = reconciler_over(tmp_path)
    await reconciler.reconcile(state)
    replica = manager.get("t", 0)
    assert replica is not None
    replica.append_as_leader(build_batch([(1, b"k", b"old", None)]), 1)
    assert replica.log.log_end_offset == 1
    await manager.close_all()  # the node stops; meanwhile the topic is deleted and recreated

    apply_all(state, ctl.delete_topic(state, "t"))
    apply_all(state, ctl.create_topic(state, "t", 2, 2, {}))
    manager, reconciler = reconciler_over(tmp_path)
    await reconciler.reconcile(state)
    fresh = manager.get("t", 0)
    assert fresh is not None and fresh.log.log_end_offset == 0
    assert any(d.name.endswith(DELETE_SUFFIX) for d in tmp_path.iterdir())
    await manager.close_all()


async def test_unassigned_directories_are_removed_only_when_asked(tmp_path: Path) -> None:
    ctl, state = two_brokers()
    apply_all(state, ctl.create_topic(state, "gone", 1, 2, {}))
    apply_all(state, ctl.create_topic(state, "kept", 1, 2, {}))
    manager, reconciler = reconciler_over(tmp_path)
    await reconciler.reconcile(state)
    await manager.close_all()
    (tmp_path / "__raft").mkdir()  # not a partition directory: left alone
    legacy = tmp_path / "legacy-0"  # written before topics had ids: never deleted
    legacy.mkdir()
    (legacy / "partition.meta").write_text("version=1\ntopic=legacy\npartition=0\ncreated_ms=1\n")

    apply_all(state, ctl.delete_topic(state, "gone"))
    manager, reconciler = reconciler_over(tmp_path)
    await reconciler.reconcile(state)  # opens "kept"; "gone" is not opened...
    assert (tmp_path / "gone-0").exists()  # ...but not removed before catch-up is known
    assert manager.remove_unassigned_dirs() == 1
    assert not (tmp_path / "gone-0").exists() and (tmp_path / "kept-0").exists()
    assert (tmp_path / "__raft").exists() and legacy.exists()
    await manager.close_all()


async def test_a_topic_created_in_several_entries_is_hosted_once_it_appears(
    tmp_path: Path,
) -> None:
    ctl, state = two_brokers()
    manager, reconciler = reconciler_over(tmp_path)
    await reconciler.reconcile(state)
    decision = ctl.create_topic(state, "big", 40, 2, {})
    entries = split_records(decision.records, 15)
    for entry in entries[:-1]:  # the partitions come first; a pass runs in between
        state.apply_entry(state.last_applied_index + 1, entry)
        await reconciler.reconcile(state)
        assert not manager.hosted()
    state.apply_entry(state.last_applied_index + 1, entries[-1])
    await reconciler.reconcile(state)
    assert {k.partition for k in manager.hosted()} == set(range(40))
    apply_all(state, ctl.delete_topic(state, "big"))
    await reconciler.reconcile(state)  # only what changed: all of it goes
    assert not manager.hosted()
    assert not [d for d in tmp_path.iterdir() if d.name.startswith("big-")]
    await manager.close_all()


async def test_a_topic_deleted_and_recreated_between_passes_keeps_the_new_partitions(
    tmp_path: Path,
) -> None:
    ctl, state = two_brokers()
    apply_all(state, ctl.create_topic(state, "t", 4, 2, {}))
    manager, reconciler = reconciler_over(tmp_path)
    await reconciler.reconcile(state)
    old = manager.get("t", 0)
    assert old is not None
    old.append_as_leader(build_batch([(1, b"k", b"old", None)]), 1)
    apply_all(state, ctl.delete_topic(state, "t"))
    apply_all(state, ctl.create_topic(state, "t", 4, 2, {}))
    await reconciler.reconcile(state)  # removes the old logs and opens the new ones at once
    for p in range(4):
        fresh = manager.get("t", p)
        assert fresh is not None and fresh.log.log_end_offset == 0
        assert (tmp_path / f"t-{p}").is_dir()  # the old one's deletion left it alone
    await manager.close_all()


async def test_a_stopping_node_closes_its_logs_with_two_syncs_and_no_fsync_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Closed one by one, each log cost a dozen fsyncs (700 partitions: seconds to stop);
    every log is now closed cleanly (its marker left) by two syncs of the file system."""
    ctl, state = two_brokers()
    apply_all(state, ctl.create_topic(state, "t", 40, 1, {}))
    manager, reconciler = reconciler_over(tmp_path)
    await reconciler.reconcile(state)
    hosted = manager.hosted()
    for key in hosted:
        replica = manager.get(key.topic, key.partition)
        assert replica is not None
        replica.log.append_as_leader(build_batch([(0, None, b"v", None)]), 0, 0)
    syncs: list[str] = []
    monkeypatch.setattr(disk_io, "fsync", lambda fd: syncs.append("fsync"))
    monkeypatch.setattr(disk_io, "syncfs", lambda fd: syncs.append("syncfs"))
    await manager.close_all()
    assert syncs == ["syncfs", "syncfs"]
    monkeypatch.undo()
    assert hosted and all(
        (tmp_path / f"{key.topic}-{key.partition}" / CLEAN_SHUTDOWN_FILE).exists() for key in hosted
    )


async def test_a_log_that_fails_to_close_gets_no_marker_and_the_others_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctl, state = two_brokers()
    apply_all(state, ctl.create_topic(state, "t", 8, 1, {}))
    manager, reconciler = reconciler_over(tmp_path)
    await reconciler.reconcile(state)
    hosted = sorted(manager.hosted(), key=lambda k: (k.topic, k.partition))
    broken = manager.get(hosted[0].topic, hosted[0].partition)
    assert broken is not None

    def disk_full(batch: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(broken.log, "prepare_close", disk_full)
    await manager.close_all()
    markers = {
        key: (tmp_path / f"{key.topic}-{key.partition}" / CLEAN_SHUTDOWN_FILE).exists()
        for key in hosted
    }
    assert markers == {key: key != hosted[0] for key in hosted}
    assert broken.log._closed  # its files released all the same
