"""Partition replication under faults: the deterministic simulation of 3 replicas on a
SimQuorum metadata log (the package tests/unit/broker/replication_sim/), over many seeds.
It runs the broker's own replica code (PartitionReplica on real PartitionLog files, the
follower-fetch answer, the ISR settling, the acks=all verdict) and its drivers' own
sans-I/O control flow (ControllerCall, BrokerMembership, MetadataPoll, FollowerProgress,
Reconciliation, IsrProposalCycle, FetchRound, LongPoll, FlushPass and the drivers' steps),
never a copy of them.

A failing seed is a reproducible bug report; replay it with a trace of its last events:

    .venv/bin/python tests/unit/broker/replication_sim SEED

Found by this suite (seeds 56, 95, 135, 240): the ISR manager treated an AlterPartition
without answer (or refused against a newer partition epoch, the answer a retry of an already
committed expansion gets) as refused. The controller may have committed the expansion, yet
the leader stopped counting the new member and committed records without it; when that
member was elected next, acknowledged records were lost. Fixed by
``LeaderState.proposal_outcome_unknown`` and its use by the ISR manager's settling step
(replication/isr_proposal_step.py, which the simulation runs); the regression test below
runs seeds that show it with the old step (the broken variant
``Bug.LOST_ALTER_ANSWER_REFUSED``, a subclass of the real step) to prove it was real and is
caught. Since the simulation runs the real replica, log and drivers' control flow, the
seeds that show it change when their behaviour does: 75, 248, 391 and 479 since a request
reaches a voter at most once per attempt (no duplicate copies; the call marks the
ambiguity of its own retries); 68, 110, 235 and 391 since it runs both the controller
side (three voters answering with the controller's own exchanges, reached through the
link's voter choice and per-attempt timeout) and the broker's metadata follower,
reconciler and flush task's own passes; 68, 110, 236 and 391 with the controller
side alone, 130, 236, 346 and 579 with the broker's passes alone; 20, 130, 151 and 236
since the simulation runs the broker's own membership (BrokerMembership: no heartbeat
before the metadata has caught up, no ISR removals while deaf, a new incarnation on
re-registering); 120, 170, 437 and 569 before, and 141 and 459 before followers of a new
partition that have not fetched kept their ISR place longer.
"""

from __future__ import annotations

from collections import Counter

import pytest
from replication_sim import Bug, SimResult, run_seed

SEEDS = range(400)
OLD_DRIVER_BUG_SEEDS = (75, 248, 391, 479)
REPLAY = ".venv/bin/python tests/unit/broker/replication_sim {seed}{bug}"


def report(result: SimResult, bug: Bug | None = None) -> str:
    suffix = f" {bug.value}" if bug is not None else ""
    return (
        f"seed {result.seed}: {result.violation}\n"
        f"replay: {REPLAY.format(seed=result.seed, bug=suffix)}"
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_no_acknowledged_record_is_lost_and_replicas_converge(seed: int) -> None:
    result = run_seed(seed)
    assert result.violation is None, report(result)
    assert result.acked > 0, f"seed {seed} acknowledged nothing: the run proves nothing"


@pytest.mark.parametrize("seed", OLD_DRIVER_BUG_SEEDS)
def test_seed_lost_alter_partition_answer_regression(seed: int) -> None:
    """With the old ISR settling step (a lost or stale-refused expansion counted as
    refused) an acknowledged record is lost; with the real step it is not."""
    assert run_seed(seed, Bug.LOST_ALTER_ANSWER_REFUSED).violation is not None
    assert run_seed(seed).violation is None


@pytest.mark.parametrize("seed", (1029, 1726, 1782, 1879))
def test_seed_a_tail_shorter_than_flush_messages_commits(seed: int) -> None:
    """Found by the 10,000-seed sweep: with ``flush.messages`` set and no ``flush.ms``, a
    leader's unflushed tail shorter than ``flush.messages`` was never fsynced, so the high
    watermark (which waits for the leader's fsync) never reached it and the cluster never
    became quiescent. The flush task now flushes such a tail at its next pass."""
    result = run_seed(seed)
    assert result.violation is None, report(result)


def test_seed_5975_a_late_answer_never_cuts_a_log_refilled_to_the_same_end() -> None:
    """Found by the 10,000-seed sweep: a follower's fetch from offset 39 got a divergence
    answer late, after the follower had already cut its log to 36 and fetched the new
    leader's committed batch [36, 39). Same end offset, same leader epoch: the old stale
    check let the late answer cut the committed batch. The log's truncation count, taken
    when the fetch is sent, now makes such an answer stale."""
    result = run_seed(5975)
    assert result.violation is None, report(result)


def test_runs_are_replayable_by_seed() -> None:
    first, again = run_seed(11), run_seed(11)
    assert (first.violation, first.events, first.end_ms, first.stats) == (
        again.violation,
        again.events,
        again.end_ms,
        again.stats,
    )
    assert run_seed(12).stats != first.stats


def test_the_runs_go_through_the_paths_that_matter() -> None:
    """A simulation that never diverges, fences or churns the ISR would pass vacuously."""
    total: Counter[str] = Counter()
    for seed in range(40):
        total.update(run_seed(seed).stats)
    for path in (
        "acks",
        "leaderships",
        "divergence answers",
        "batches truncated",
        "stale fetch answers dropped",
        "fetch answer FENCED_LEADER_EPOCH",
        "fetch answer UNKNOWN_LEADER_EPOCH",
        "ISR shrinks proposed",
        "ISR expansions proposed",
        "ISR proposals refused",
        "ISR proposals unanswered",
        "produce NOT_LEADER_OR_FOLLOWER",
        "produce NOT_ENOUGH_REPLICAS",
        "produce REQUEST_TIMED_OUT",
        "nemesis crash",
        "nemesis pause",
        "nemesis failover",
        "controller calls answered NOT_CONTROLLER",
        "controller call attempts timed out",
        "fsyncs",
        "acks after fsync",
    ):
        assert total[path] > 0, f"no run went through {path!r}: {dict(total)}"


# Where each broken variant is looked for: the first seeds, or (the ISR settling and the
# ISR cycle's ending, which need a lost answer to an expansion at the wrong moment) the
# seeds that show it (for the cycle reading an unanswered call, or a refusal after an
# unanswered attempt, as a refusal: the first of seeds 0-1017 that does; a call moves on
# to another voter after an unanswered attempt, so few end without any answer).
CATCHING_SEEDS = {
    Bug.LOST_ALTER_ANSWER_REFUSED: OLD_DRIVER_BUG_SEEDS,
    Bug.UNANSWERED_ALTER_CALL_REFUSED: (1017,),
}


@pytest.mark.parametrize("bug", list(Bug), ids=lambda b: b.value)
def test_the_checker_catches_a_broken_variant(bug: Bug) -> None:
    """Proof that the invariants bite: a deliberately broken leader (a broken decision or
    a broken driver step) is caught within a small sweep, on a seed that passes when
    nothing is broken."""
    seeds = CATCHING_SEEDS.get(bug, range(20))
    for seed in seeds:
        broken = run_seed(seed, bug)
        if broken.violation is not None:
            sound = run_seed(seed)
            assert sound.violation is None, report(sound)
            return
    pytest.fail(f"{bug.value}: no seed in {seeds} caught it")
