"""How a run ends: a :class:`Violation` stops it at the first broken invariant, and a
:class:`SimResult` reports it (the violation or None, and what the run went through).

Why a module of its own: the partition log, the broker parts and the checker all raise
:class:`Violation`, and the runner turns it into a :class:`SimResult`; keeping both here
lets those modules depend on the outcome without depending on each other.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


class Violation(Exception):
    """An invariant broke: the run stops here (the message says what, where and when)."""


@dataclass(slots=True)
class SimResult:
    """One run's verdict, and what it went through: ``stats`` counts the paths taken (the
    suite requires the important ones to be reached), ``trace`` holds the last events when
    asked for."""

    seed: int
    violation: str | None
    events: int
    end_ms: int
    acked: int
    leader_epochs: int
    stats: Counter[str] = field(default_factory=Counter)
    trace: list[str] = field(default_factory=list)
