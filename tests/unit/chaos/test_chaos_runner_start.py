"""A cluster whose planned port was taken before a node bound it is planned again (a busy
machine's race, before any workload); any other start failure is the run's error."""

from __future__ import annotations

from typing import Any

import pytest

from rillet.chaos import runner
from rillet.launcher.local_node import NodeStartError

TAKEN = "node 1 exited with status 1:\nOSError: [Errno 98] Address already in use"


def test_a_taken_port_is_planned_again(monkeypatch: pytest.MonkeyPatch) -> None:
    outcomes: list[Any] = [NodeStartError(TAKEN), NodeStartError(TAKEN), "result"]

    def attempt(config: runner.RunConfig, node_wrap: Any = None, schedule: Any = None) -> Any:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    monkeypatch.setattr(runner, "_run_once", attempt)
    assert runner.run_once(runner.RunConfig()) == "result"


def test_a_port_taken_every_time_or_another_start_failure_is_raised(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []

    def attempt_with(message: str) -> Any:
        def attempt(config: runner.RunConfig, node_wrap: Any = None, schedule: Any = None) -> Any:
            calls.append(message)
            raise NodeStartError(message)

        return attempt

    monkeypatch.setattr(runner, "_run_once", attempt_with(TAKEN))
    with pytest.raises(NodeStartError):
        runner.run_once(runner.RunConfig())
    assert len(calls) == runner.START_ATTEMPTS
    calls.clear()
    monkeypatch.setattr(runner, "_run_once", attempt_with("node 2 did not become ready"))
    with pytest.raises(NodeStartError):
        runner.run_once(runner.RunConfig())
    assert len(calls) == 1


@pytest.mark.parametrize(
    "message",
    [
        TAKEN,
        # The node's own one-line error (seed 53 of a sweep stopped on it: not recognised).
        "node 2 exited with status 2:\nERROR rillet.cli.node_command: address already in use: "
        "another process holds a port (listener.port 45231, kafka_listener.port 59649)",
    ],
)
def test_both_ways_a_node_reports_a_taken_port_are_recognised(message: str) -> None:
    assert runner.port_taken(NodeStartError(message))
    assert not runner.port_taken(NodeStartError("node 2 did not become ready"))


def test_the_direct_network_runs_without_proxies_and_refuses_partitions() -> None:
    runner.RunConfig(network="direct", faults=("pause", "kill-leader")).check()
    with pytest.raises(ValueError, match="network partitions need"):
        runner.RunConfig(network="direct", faults=("pause", "partition")).check()
