"""How the runner drives a schedule in time: every fault stays in force for its whole window
from when it was applied, however long finding its target took. A fake clock stands in for
the harness's; the nemesis is a recorder whose starts take as long as a test says."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from rillet.chaos.history import HistoryWriter
from rillet.chaos.nemesis import Nemesis
from rillet.chaos.runner import _drive
from rillet.chaos.schedule import FaultStep, Schedule


@dataclass
class _Clock:
    now: float = 0.0
    written: list[dict[str, Any]] = field(default_factory=list)

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def write(self, event: dict[str, Any]) -> None:
        self.written.append(event)


@dataclass
class _Nemesis:
    clock: _Clock
    start_takes_s: dict[int, float]
    events: list[tuple[str, int, float]] = field(default_factory=list)

    def start(self, step: FaultStep) -> bool:
        self.clock.now += self.start_takes_s.get(step.index, 0.0)  # probes, then the fault
        self.events.append(("start", step.index, self.clock.now))
        return True

    def heal(self, step: FaultStep) -> None:
        self.events.append(("heal", step.index, self.clock.now))

    def check_crashes(self) -> None:
        pass


def _windows(start_takes_s: dict[int, float]) -> tuple[dict[int, float], _Nemesis]:
    steps = [
        FaultStep(0, "pause", 1.0, 3.0, "raft-leader"),
        FaultStep(1, "pause", 4.0, 6.5, "raft-leader"),
    ]
    clock = _Clock()
    nemesis = _Nemesis(clock, start_takes_s)
    _drive(
        Schedule(seed=0, duration_s=10.0, nodes=3, max_down=1, steps=steps),
        cast(Nemesis, nemesis),
        cast(HistoryWriter, clock),
        clock.sleep,
    )
    started = {i: t for kind, i, t in nemesis.events if kind == "start"}
    healed = {i: t for kind, i, t in nemesis.events if kind == "heal"}
    return {i: round(healed[i] - started[i], 6) for i in started}, nemesis


def test_a_fault_whose_start_was_slow_still_lasts_its_whole_window() -> None:
    windows, _ = _windows({0: 0.3, 1: 0.05})
    assert windows == {0: 2.0, 1: 2.5}


def test_a_start_later_than_the_allowed_lateness_shifts_every_later_event() -> None:
    windows, nemesis = _windows({0: 1.2})
    assert windows == {0: 2.0, 1: 2.5}
    second = next(t for kind, i, t in nemesis.events if (kind, i) == ("start", 1))
    assert round(second, 6) == 5.2  # the gap after the first fault is kept too
