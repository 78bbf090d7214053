"""DeleteRecords on a partition replica: the leader's log start moves at once, and the wait
for it ends only when every in-sync follower reports its own log start there (so a new
leader, whichever is elected, has it), or when the leadership ends."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.testing

from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.broker.replica.replica_role import ReplicaRole, TopicPartitionKey
from rillet.broker.runtime.invariants import InvariantViolation
from rillet.partition_store.config import LogConfig
from rillet.partition_store.log import PartitionLog
from rillet.wire.batch import build_batch

T0 = 1_700_000_000_000
NODE = 1


def replica(tmp_path: Path, name: str = "t-0") -> PartitionReplica:
    log = PartitionLog.open(tmp_path / name, LogConfig(), T0, "t", 0)
    return PartitionReplica(TopicPartitionKey("t", 0), log, lambda: None)


def leader(epoch: int, isr: tuple[int, ...] = (NODE, 2, 3)) -> ReplicaRole:
    return ReplicaRole(True, epoch, isr, NODE, replicas=(NODE, 2, 3), leader_id=NODE)


def committed(r: PartitionReplica, n: int) -> int:
    info = r.append_as_leader(build_batch([(T0, None, b"v", None)] * n), T0)
    end = info.last_offset + 1
    for follower in (2, 3):
        r.on_follower_fetch(follower, end, T0, log_start_offset=0)
    assert r.high_watermark == end
    return end


async def test_the_wait_ends_when_every_in_sync_follower_has_the_new_log_start(
    tmp_path: Path,
) -> None:
    r = replica(tmp_path)
    r.set_role(leader(1), T0)
    end = committed(r, 10)
    r.advance_log_start(6)
    assert r.log.log_start_offset == 6 and r.low_watermark == 0
    results: list[bool] = []

    async def wait() -> None:
        results.append(await r.wait_for_low_watermark(6, 1))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(wait)
        await trio.testing.wait_all_tasks_blocked()
        r.on_follower_fetch(2, end, T0, log_start_offset=6)
        await trio.testing.wait_all_tasks_blocked()
        assert results == []  # follower 3 still has the records
        r.on_follower_fetch(3, end, T0, log_start_offset=6)
    assert results == [True] and r.low_watermark == 6
    r.log.close()


async def test_a_follower_dropped_from_the_isr_no_longer_holds_the_wait(tmp_path: Path) -> None:
    r = replica(tmp_path)
    r.set_role(leader(1), T0)
    end = committed(r, 10)
    r.advance_log_start(4)
    r.on_follower_fetch(2, end, T0, log_start_offset=4)
    results: list[bool] = []

    async def wait() -> None:
        results.append(await r.wait_for_low_watermark(4, 1))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(wait)
        await trio.testing.wait_all_tasks_blocked()
        r.set_role(leader(1, isr=(NODE, 2)), T0)  # 3 left the ISR
    assert results == [True]
    r.log.close()


async def test_the_wait_fails_when_the_leadership_ends(tmp_path: Path) -> None:
    r = replica(tmp_path)
    r.set_role(leader(1), T0)
    committed(r, 5)
    r.advance_log_start(5)
    results: list[bool] = []

    async def wait() -> None:
        results.append(await r.wait_for_low_watermark(5, 1))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(wait)
        await trio.testing.wait_all_tasks_blocked()
        r.set_role(ReplicaRole(False, 2, (2, 3), NODE, replicas=(NODE, 2, 3), leader_id=2), T0)
    assert results == [False]
    r.log.close()


def test_uncommitted_records_cannot_be_deleted(tmp_path: Path) -> None:
    r = replica(tmp_path)
    r.set_role(leader(1), T0)
    end = committed(r, 5)
    r.append_as_leader(build_batch([(T0, None, b"v", None)] * 3), T0)  # not replicated yet
    with pytest.raises(InvariantViolation):
        r.advance_log_start(end + 1)
    r.log.close()


def test_a_follower_takes_its_leaders_log_start_up_to_its_own_end(tmp_path: Path) -> None:
    r = replica(tmp_path)
    r.set_role(leader(1), T0)
    committed(r, 4)
    r.set_role(ReplicaRole(False, 2, (2, NODE), NODE, replicas=(NODE, 2), leader_id=2), T0)
    r.follow_log_start(2)
    assert r.log.log_start_offset == 2
    r.follow_log_start(1)  # never back
    assert r.log.log_start_offset == 2
    r.follow_log_start(9)  # beyond its end: only as far as what it holds
    assert r.log.log_start_offset == 4
    r.log.close()
    reopened = PartitionLog.open(tmp_path / "t-0", LogConfig(), T0, "t", 0)
    assert reopened.log_start_offset == 4  # durable
    reopened.close()
