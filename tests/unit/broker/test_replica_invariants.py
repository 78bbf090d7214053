"""Invariant checks stop the node instead of serving data that may be wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.broker.replica.replica_role import ReplicaRole, TopicPartitionKey
from rillet.broker.runtime.invariants import InvariantViolation, require
from rillet.partition_store.config import LogConfig
from rillet.partition_store.log import PartitionLog
from rillet.wire.batch import build_batch

T0 = 1_700_000_000_000
NODE = 1


def replica(tmp_path: Path) -> PartitionReplica:
    log = PartitionLog.open(tmp_path / "t-0", LogConfig(), T0, "t", 0)
    return PartitionReplica(TopicPartitionKey("t", 0), log, lambda: None)


def follower(epoch: int) -> ReplicaRole:
    return ReplicaRole(False, epoch, (2,), NODE, replicas=(NODE, 2), leader_id=2)


def test_a_violation_is_not_an_exception_a_handler_could_swallow() -> None:
    require(True, "fine")
    with pytest.raises(InvariantViolation, match="broken"):
        require(False, "broken")
    assert not issubclass(InvariantViolation, Exception)


def test_a_high_watermark_beyond_the_log_end_stops_the_node(tmp_path: Path) -> None:
    r = replica(tmp_path)
    r.set_role(ReplicaRole(True, 1, (NODE,), NODE, replicas=(NODE,), leader_id=NODE), T0)
    r.append_as_leader(build_batch([(T0, None, b"v", None)] * 3), T0)
    assert r.high_watermark == 3  # the only ISR member: committed at once
    r.follow_high_watermark(10)  # a leader's figure is capped at this log's end
    assert r.high_watermark == 3
    with pytest.raises(InvariantViolation, match="beyond the log end"):
        r._high_watermark_moved(4)  # what no caller may ever ask for
    assert r.high_watermark == 3


def test_a_leader_epoch_that_goes_back_stops_the_node(tmp_path: Path) -> None:
    r = replica(tmp_path)
    r.set_role(follower(5), T0)
    r.set_role(follower(5), T0)  # the same epoch again: a change of ISR, say
    with pytest.raises(InvariantViolation, match="leader epoch went back from 5 to 4"):
        r.set_role(follower(4), T0)
    assert r.leader_epoch == 5


def test_a_follower_counted_beyond_the_leader_s_log_end_stops_the_node(tmp_path: Path) -> None:
    r = replica(tmp_path)
    r.set_role(ReplicaRole(True, 1, (NODE, 2), NODE, replicas=(NODE, 2), leader_id=NODE), T0)
    r.append_as_leader(build_batch([(T0, None, b"v", None)] * 2), T0)
    r.on_follower_fetch(2, 2, T0)  # holds both records: fine
    assert r.high_watermark == 2
    with pytest.raises(InvariantViolation, match="beyond the log end 2"):
        r.on_follower_fetch(2, 3, T0)
    assert r.high_watermark == 2
