"""The flush and checkpoint passes, without a task: which replica gets an fsync, that the
high watermark follows a finished one, and which high watermarks are checkpointed."""

from __future__ import annotations

from pathlib import Path

from rillet.broker.replica.flush_pass import FlushPass, checkpoints_due
from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.broker.replica.replica_role import ReplicaRole, TopicPartitionKey
from rillet.partition_store.config import LogConfig
from rillet.partition_store.log import PartitionLog
from rillet.wire.batch import build_batch

T0 = 1_700_000_000_000
NODE = 1


def leader(tmp_path: Path, name: str, config: LogConfig) -> PartitionReplica:
    log = PartitionLog.open(tmp_path / f"{name}-0", config, T0, name, 0)
    r = PartitionReplica(TopicPartitionKey(name, 0), log, lambda: None)
    r.set_role(ReplicaRole(True, 1, (NODE, 2), NODE, replicas=(NODE, 2), leader_id=NODE), T0)
    return r


def test_a_pass_fsyncs_only_replicas_that_need_it_and_the_high_watermark_follows(
    tmp_path: Path,
) -> None:
    forced = leader(tmp_path, "forced", LogConfig(flush_messages=1))
    cached = leader(tmp_path, "cached", LogConfig())
    for r in (forced, cached):
        end = r.append_as_leader(build_batch([(T0, None, b"v", None)] * 3), T0).last_offset + 1
        r.on_follower_fetch(2, end, T0)
    assert (forced.high_watermark, cached.high_watermark) == (0, 3)
    flush_pass = FlushPass([forced, cached], T0)
    plans = [(r, flush_pass.due(r)) for r in flush_pass]
    assert [r.key.topic for r, plan in plans if plan is not None] == ["forced"]
    plan = plans[0][1]
    assert plan is not None
    plan.run()
    assert forced.high_watermark == 0  # run, not yet adopted
    flush_pass.fsynced(forced, plan)
    assert forced.high_watermark == forced.log.recovery_point == 3
    for r in (forced, cached):
        r.log.close()


def test_only_moved_high_watermarks_of_live_replicas_are_checkpointed(tmp_path: Path) -> None:
    moved = leader(tmp_path, "moved", LogConfig())
    still = leader(tmp_path, "still", LogConfig())
    for r in checkpoints_due([moved, still]):  # the first checkpoint of each
        r.checkpoint_high_watermark(durable=False)
    end = moved.append_as_leader(build_batch([(T0, None, b"v", None)]), T0).last_offset + 1
    moved.on_follower_fetch(2, end, T0)
    assert checkpoints_due([moved, still]) == [moved]
    moved.checkpoint_high_watermark(durable=False)
    assert checkpoints_due([moved, still]) == []
    moved.append_as_leader(build_batch([(T0, None, b"v", None)]), T0)
    moved.on_follower_fetch(2, end + 1, T0)
    moved.mark_deleted()
    assert checkpoints_due([moved, still]) == []  # a deleted replica is left alone
    for r in (moved, still):
        r.log.close()
