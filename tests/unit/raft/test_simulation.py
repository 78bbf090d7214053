"""The deterministic simulator: a sweep of seeds passes every safety and liveness check,
runs replay exactly, and deliberately broken cores are caught."""

from __future__ import annotations

import random
import time

import pytest
from raft_simulation.__main__ import main
from raft_simulation.checks import SafetyViolation
from raft_simulation.cluster import SimulationParams
from raft_simulation.disk import SimDisk
from raft_simulation.mutants import CoreFault
from raft_simulation.network import NetworkProfile, SimNetwork
from raft_simulation.sweep import SimulationFailure, replay, run_seed, sweep

from rillet.raft.log_storage import MemoryStorage
from rillet.raft.messages import HardState, LogEntry, TimeoutNow

CI_SEEDS = 500


def test_a_sweep_of_seeds_passes_every_check() -> None:
    started_s = time.process_time()  # CPU time: a busy CI machine must not fail this
    result = sweep(0, CI_SEEDS, SimulationParams())
    cpu_s = time.process_time() - started_s
    assert not result.failures, result.failures[0]
    runs = result.runs
    assert len(runs) == CI_SEEDS
    # The sweep exercises what it claims to: elections, crashes of every node at once,
    # lost and torn unsynced writes, snapshots, checked reads, both cluster sizes.
    assert sum(r.leaders for r in runs) > 5 * CI_SEEDS
    assert sum(r.crash_all for r in runs) > CI_SEEDS // 5
    assert sum(r.lost_writes for r in runs) > 0 and sum(r.torn_writes for r in runs) > 0
    assert sum(r.snapshots_installed for r in runs) > CI_SEEDS
    assert sum(r.reads_checked for r in runs) > CI_SEEDS
    assert {r.nodes for r in runs} == {3, 5}
    assert max(r.recovery_ticks for r in runs) < SimulationParams().liveness_bound_ticks
    assert cpu_s < 30, f"the CI sweep took {cpu_s:.1f} s of CPU"


def test_crashing_every_node_and_losing_all_unsynced_writes_loses_no_commit() -> None:
    params = SimulationParams(crash_all=True, lose_all_unsynced=True)
    result = sweep(1000, 60, params)
    assert not result.failures, result.failures[0]
    assert all(r.crash_all for r in result.runs)


def test_a_seed_replays_exactly() -> None:
    params = SimulationParams()
    assert run_seed(7, params) == run_seed(7, params)
    first_trace, first = replay(7, params)
    second_trace, second = replay(7, params)
    assert first_trace == second_trace and first == second
    assert len(first_trace) > 1000


# Each broken core, and a seed range in which the sweep catches it. The ranges are
# deterministic; if a change to the simulator moves the first catch, widen the range only
# after checking that the fault is still caught at a comparable rate.
BROKEN_CORES = [
    (CoreFault.COMMIT_PRIOR_TERM_ENTRIES, 100),  # skips the Figure-8 term check on commit
    (CoreFault.GRANT_VOTE_WITHOUT_LOG_CHECK, 20),
    (CoreFault.SKIP_SYNC, 20),  # sends votes and acks before the writes are durable
]


@pytest.mark.parametrize(("fault", "seeds"), BROKEN_CORES, ids=[f.value for f, _ in BROKEN_CORES])
def test_a_deliberately_broken_core_is_caught(fault: CoreFault, seeds: int) -> None:
    params = SimulationParams(fault=fault)
    result = sweep(0, seeds, params)
    assert result.failures, f"{fault.value} survived {seeds} seeds"
    failure = result.failures[0]
    assert isinstance(failure.__cause__, SafetyViolation)
    assert f"--start {failure.seed} --seeds 1" in failure.replay
    assert f"--fault {fault.value}" in failure.replay
    # The replay reproduces the same violation.
    with pytest.raises(SimulationFailure) as again:
        run_seed(failure.seed, params)
    assert again.value.reason == failure.reason


def test_the_cli_prints_a_table_and_on_failure_the_replay_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--seeds", "3", "--start", "5"]) == 0
    out = capsys.readouterr().out
    assert "passed / failed                  3 / 0" in out
    assert main(["--seeds", "5", "--fault", "grant-vote-without-log-check"]) == 1
    out = capsys.readouterr().out
    assert "FAILED seed" in out
    assert "replay: python -m raft_simulation --start" in out


# -- the simulated disk and network ----------------------------------------------------


def test_a_crash_keeps_synced_writes_and_at_most_a_prefix_of_the_rest() -> None:
    for seed in range(50):
        disk = SimDisk()
        disk.write_entries((LogEntry(1, 1, b"a"),))
        disk.write_hard_state(HardState(1, 1, 1))
        disk.sync()
        disk.write_entries(tuple(LogEntry(i, 1, b"x") for i in range(2, 6)))
        disk.write_hard_state(HardState(1, 1, 5))
        disk.crash(random.Random(seed), torn_writes=True)
        view: MemoryStorage = disk.view
        assert view.term(1) == 1 and 1 <= view.last_index() <= 5
        if view.hard_state().commit == 5:
            assert view.last_index() == 5  # the hard state came after the entries
    disk = SimDisk()
    disk.write_entries((LogEntry(1, 1, b"a"),))
    disk.crash(random.Random(0), torn_writes=True, lose_all_unsynced=True)
    assert disk.view.last_index() == 0


def test_partitions_block_both_ways_or_one_way_and_buffer_on_request() -> None:
    network = SimNetwork([1, 2, 3], random.Random(0), NetworkProfile())
    network.partition([[1], [2, 3]], buffering=True)
    assert network.is_blocked(1, 2) and network.is_blocked(2, 1)
    assert not network.is_blocked(2, 3)
    held = TimeoutNow(1, 1, 2)
    assert network.delays_us(held) == []
    assert network.heal() == [held]
    network.cut_one_way(3, 1)
    assert network.is_blocked(3, 1) and not network.is_blocked(1, 3)
    assert len(network.delays_us(TimeoutNow(1, 1, 3))) == 1


# -- voter membership changes ------------------------------------------------------------

MEMBERSHIP_CI_SEEDS = 200


def test_a_sweep_with_membership_changes_passes_every_check() -> None:
    """Voters added and removed (leaders removing themselves too), and voters whose disk
    is replaced, under crashes and partitions: one leader per term, no committed entry
    lost, one server per change."""
    started_s = time.process_time()
    result = sweep(0, MEMBERSHIP_CI_SEEDS, SimulationParams(membership=True))
    cpu_s = time.process_time() - started_s
    assert not result.failures, result.failures[0]
    runs = result.runs
    assert sum(r.config_changes for r in runs) > MEMBERSHIP_CI_SEEDS
    assert sum(r.leaders_removed for r in runs) > MEMBERSHIP_CI_SEEDS // 10
    assert sum(r.config_changes_refused for r in runs) > MEMBERSHIP_CI_SEEDS
    assert sum(r.crash_all for r in runs) > MEMBERSHIP_CI_SEEDS // 5
    assert sum(r.wipes for r in runs) > MEMBERSHIP_CI_SEEDS // 20
    assert cpu_s < 20, f"the membership sweep took {cpu_s:.1f} s of CPU"


BROKEN_MEMBERSHIP_CORES = [
    (CoreFault.TWO_SERVER_CHANGE, "changes 2 servers, not one"),
    (CoreFault.SKIP_OWN_TERM_COMMIT, "before committing an entry of that term"),
]


@pytest.mark.parametrize(
    ("fault", "reason"), BROKEN_MEMBERSHIP_CORES, ids=[f.value for f, _ in BROKEN_MEMBERSHIP_CORES]
)
def test_a_broken_membership_change_is_caught(fault: CoreFault, reason: str) -> None:
    params = SimulationParams(fault=fault, membership=True)
    result = sweep(0, 20, params)
    assert result.failures, f"{fault.value} survived 20 seeds"
    failure = result.failures[0]
    assert isinstance(failure.__cause__, SafetyViolation)
    assert reason in failure.reason
    assert "--membership" in failure.replay and f"--fault {fault.value}" in failure.replay
