"""acks=all waiters are bound to the leader epoch their batch was appended in.

Regression for chaos seed 5 (a sweep of 60 s schedules with network partitions): a leader
isolated from its followers appended batches that were truncated once it followed the new
leader; when preferred-leader rebalance made it leader again, an acks=all wait for one of
those batches (registered while it was not leading: a produce request waits for its
partitions one after the other) completed as soon as the new leadership's high watermark
passed the old offset, and the client was told its record was at an offset that held
another record. Two acknowledgements named one offset; one record was lost.
"""

from __future__ import annotations

from pathlib import Path

import trio

from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.broker.replica.replica_role import ReplicaRole, TopicPartitionKey
from rillet.broker.replica.replication.acks_verdict import acks_all_answer
from rillet.partition_store.config import LogConfig
from rillet.partition_store.log import PartitionLog
from rillet.wire.batch import build_batch
from rillet.wire.error_codes import ErrorCode

T0 = 1_700_000_000_000
NODE = 1


def replica(tmp_path: Path) -> PartitionReplica:
    log = PartitionLog.open(tmp_path / "t-0", LogConfig(), T0, "t", 0)
    return PartitionReplica(TopicPartitionKey("t", 0), log, lambda: None)


def leader(epoch: int, isr: tuple[int, ...] = (NODE, 2)) -> ReplicaRole:
    return ReplicaRole(True, epoch, isr, NODE, replicas=(NODE, 2), leader_id=NODE)


def follower(epoch: int) -> ReplicaRole:
    return ReplicaRole(False, epoch, (2,), NODE, replicas=(NODE, 2), leader_id=2)


def append(r: PartitionReplica, n: int) -> int:
    info = r.append_as_leader(build_batch([(T0, None, b"v", None)] * n), T0)
    return info.last_offset + 1


async def test_seed_5_a_wait_from_an_earlier_leadership_never_completes_in_a_later_one(
    tmp_path: Path,
) -> None:
    r = replica(tmp_path)
    r.set_role(leader(5), T0)
    target = append(r, 3)
    results: list[bool] = []

    async def wait() -> None:
        results.append(await r.wait_for_high_watermark(target, 5))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(wait)
        await trio.testing.wait_all_tasks_blocked()
        r.set_role(leader(7), T0)  # its view skipped the follower state in between
        r.on_follower_fetch(2, target, T0)  # the new leadership's high watermark passes it
    assert results == [False]
    r.log.close()


async def test_a_wait_registered_while_not_leading_fails_at_once(tmp_path: Path) -> None:
    r = replica(tmp_path)
    r.set_role(leader(5), T0)
    target = append(r, 2)
    r.set_role(follower(6), T0)
    with trio.fail_after(1):
        assert await r.wait_for_high_watermark(target, 5) is False
    r.set_role(leader(7), T0)
    with trio.fail_after(1):
        assert await r.wait_for_high_watermark(target, 5) is False
    r.log.close()


async def test_a_wait_in_the_same_leadership_completes_when_followers_catch_up(
    tmp_path: Path,
) -> None:
    r = replica(tmp_path)
    r.set_role(leader(5), T0)
    target = append(r, 2)
    results: list[bool] = []

    async def wait() -> None:
        results.append(await r.wait_for_high_watermark(target, 5))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(wait)
        await trio.testing.wait_all_tasks_blocked()
        r.on_follower_fetch(2, target, T0)
    assert results == [True]
    r.log.close()


def test_a_new_leader_answers_no_offsets_until_its_high_watermark_reaches_its_epoch(
    tmp_path: Path,
) -> None:
    """Chaos (Kafka clients) seed 20: the end offset a client read went back by one across a
    leader change. A new leader learns the high watermark one follower fetch late, so until
    it reaches the start of its epoch it may lie below what the previous leader exposed."""
    r = replica(tmp_path)
    r.set_role(leader(5), T0)
    end = append(r, 3)  # follower 2 has not fetched: the high watermark is still 0
    assert r.high_watermark_settled  # within one leadership, 0 is the truth
    r.set_role(leader(7), T0)  # a new epoch starts at the log end
    assert r.high_watermark == 0 and not r.high_watermark_settled
    r.on_follower_fetch(2, end, T0)
    assert r.high_watermark == end and r.high_watermark_settled
    r.log.close()


def test_a_replica_added_by_a_move_counts_without_a_leader_change(tmp_path: Path) -> None:
    """A reassignment adds replica 3 within this leadership (no new epoch): its fetches
    must count, or it never joins the ISR and the move never completes."""
    r = replica(tmp_path)
    r.set_role(leader(5, isr=(NODE,)), T0)
    end = append(r, 2)
    r.set_role(ReplicaRole(True, 5, (NODE,), NODE, replicas=(3, NODE, 2), leader_id=NODE), T0)
    r.on_follower_fetch(3, end, T0)
    assert r.leader is not None and r.leader.followers[3].log_end_offset == end
    r.log.close()


def test_a_wait_hidden_by_an_earlier_timeout_is_answered_by_its_own_progress(
    tmp_path: Path,
) -> None:
    """The produce handler waits for a request's partitions one after another under one
    timeout: a wait it never reached is answered by whether its high watermark passed
    (acks_all_answer, which the replication simulation runs too)."""
    r = replica(tmp_path)
    r.set_role(leader(5), T0)
    target = append(r, 2)
    assert acks_all_answer(r, target, 5, reached=False)[0] == ErrorCode.REQUEST_TIMED_OUT
    r.on_follower_fetch(2, target, T0)
    assert acks_all_answer(r, target, 5, reached=False) == (ErrorCode.NONE, "")
    r.set_role(leader(7), T0)  # a later leadership never answers an earlier wait
    assert acks_all_answer(r, target, 5, reached=False)[0] == ErrorCode.NOT_LEADER_OR_FOLLOWER
    r.log.close()
