"""With a forced-fsync policy the high watermark only covers fsynced records.

``flush.ms = 0`` means "fsync as soon as possible", as in Kafka; it must gate the high
watermark like any other forced policy. It used to count as "no policy" (only positive
values did), so acks=all was answered over records that were only in the page cache.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.broker.replica.replica_role import ReplicaRole, TopicPartitionKey
from rillet.broker.replica.replication.replica_fetcher import _flush_before_fetch
from rillet.partition_store.config import LogConfig
from rillet.partition_store.log import PartitionLog
from rillet.wire.batch import build_batch

T0 = 1_700_000_000_000
NODE = 1


def leader_with_follower(tmp_path: Path, config: LogConfig) -> tuple[PartitionReplica, list[int]]:
    requests: list[int] = []
    log = PartitionLog.open(tmp_path / "t-0", config, T0, "t", 0)
    r = PartitionReplica(TopicPartitionKey("t", 0), log, lambda: requests.append(1))
    r.set_role(ReplicaRole(True, 1, (NODE, 2), NODE, replicas=(NODE, 2), leader_id=NODE), T0)
    return r, requests


@pytest.mark.parametrize(
    "config",
    [LogConfig(flush_ms=0), LogConfig(flush_ms=1), LogConfig(flush_messages=1)],
    ids=["flush_ms=0", "flush_ms=1", "flush_messages=1"],
)
def test_a_forced_fsync_policy_holds_the_high_watermark_at_the_recovery_point(
    tmp_path: Path, config: LogConfig
) -> None:
    r, requests = leader_with_follower(tmp_path, config)
    end = r.append_as_leader(build_batch([(T0, None, b"v", None)] * 3), T0 + 5).last_offset + 1
    r.on_follower_fetch(2, end, T0 + 5)  # the follower holds everything
    assert r.high_watermark == r.log.recovery_point == 0
    if config.flush_ms != 1:  # flush.ms=1 is due one millisecond later, at the next check
        assert requests and r.flush_requested
    r.log.close()


def test_without_a_forced_fsync_policy_the_high_watermark_follows_replication(
    tmp_path: Path,
) -> None:
    r, requests = leader_with_follower(tmp_path, LogConfig())
    end = r.append_as_leader(build_batch([(T0, None, b"v", None)] * 3), T0).last_offset + 1
    r.on_follower_fetch(2, end, T0)
    assert r.high_watermark == end and not requests
    r.log.close()


def _follower(tmp_path: Path, config: LogConfig) -> PartitionReplica:
    log = PartitionLog.open(tmp_path / "t-0", config, T0, "t", 0)
    r = PartitionReplica(TopicPartitionKey("t", 0), log, lambda: None)
    r.set_role(ReplicaRole(False, 1, (1, NODE), NODE, replicas=(1, NODE), leader_id=1), T0)
    return r


@pytest.mark.parametrize(
    ("config", "flushed"),
    [(LogConfig(flush_ms=0), True), (LogConfig(flush_messages=1000), True), (LogConfig(), False)],
    ids=["flush_ms=0", "flush_messages=1000", "no policy"],
)
async def test_a_follower_with_a_flush_policy_fsyncs_before_it_fetches_again(
    tmp_path: Path, config: LogConfig, flushed: bool
) -> None:
    """Its next fetch offset moves the leader's high watermark (acks=all): with a flush
    policy, what it reports must be on its disk, or a power cut of every node loses
    acknowledged records (docs/guarantees.md)."""
    r = _follower(tmp_path, config)
    batch = bytearray(build_batch([(T0, None, b"v", None)] * 3))
    batch[12:16] = (1).to_bytes(4, "big")  # the leader's epoch, as replicated batches carry
    r.append_as_follower(batch, T0)
    assert r.follower_flush_due() is flushed
    await _flush_before_fetch([r])
    assert (r.log.recovery_point == r.log.log_end_offset == 3) is flushed
    r.log.close()
