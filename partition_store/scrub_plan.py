"""A scrub pass: re-check the CRC of every stored batch, a bounded step at a time, paced.

The sans-I/O core of the background scrub (and of ``rillet scrub``): given the segments to
check, it says which byte range to verify next and how long to wait first so that the pass
reads at most ``bytes_per_second`` on average; the driver reads and checks the range
(``batch_verify.verify_file_range``, in a worker thread) and reports the outcome back. A
segment's walk stops at its first damaged batch: everything after it is cut by the repair
anyway. Time comes in as ``now_ms``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from rillet.partition_store.batch_verify import VerifyOutcome

K = TypeVar("K")

# Bytes per step: small enough that a step is a short worker-thread job, large enough that a
# step is not dominated by per-call overhead.
DEFAULT_STEP_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ScrubTarget:
    """One segment as it was when the pass was planned: the walk covers ``[0, size)``.

    ``generation`` is the log's truncation count then; a finding for a log cut since is
    dropped (the bytes it describes may be gone).
    """

    base_offset: int
    size: int
    path: Path
    generation: int


@dataclass(frozen=True, slots=True)
class ScrubStep(Generic[K]):
    """Verify ``[start, start + max_bytes)`` (to a batch boundary) of target ``position``."""

    position_in_plan: int
    key: K
    target: ScrubTarget
    start: int
    expected_offset: int
    max_bytes: int


@dataclass(slots=True)
class ScrubStats:
    segments_checked: int = 0
    bytes_checked: int = 0
    damaged: int = 0


@dataclass(slots=True)
class _Cursor:
    position: int
    offset: int


@dataclass(slots=True)
class ScrubPlan(Generic[K]):
    """One pass over ``targets`` (``(key, target)`` pairs; the key is the caller's)."""

    targets: list[tuple[K, ScrubTarget]]
    bytes_per_second: int
    now_ms: int
    step_bytes: int = DEFAULT_STEP_BYTES
    stats: ScrubStats = field(default_factory=ScrubStats)
    _index: int = 0
    _cursor: _Cursor | None = None
    _not_before_ms: float = 0.0
    _step_started_ms: int = 0

    def __post_init__(self) -> None:
        if self.bytes_per_second <= 0:
            raise ValueError("bytes_per_second must be positive")
        self._not_before_ms = float(self.now_ms)

    @property
    def done(self) -> bool:
        return self._index >= len(self.targets)

    def next_step(self, now_ms: int) -> ScrubStep[K] | int | None:
        """The next range to verify, or milliseconds to wait first, or None when done."""
        if self.done:
            return None
        if now_ms < self._not_before_ms:
            return max(int(self._not_before_ms - now_ms) + 1, 1)
        key, target = self.targets[self._index]
        if self._cursor is None:
            self._cursor = _Cursor(0, target.base_offset)
        self._step_started_ms = now_ms
        step_bytes = min(self.step_bytes, max(self.bytes_per_second, 1))
        return ScrubStep(
            self._index, key, target, self._cursor.position, self._cursor.offset, step_bytes
        )

    def step_done(self, step: ScrubStep[K], outcome: VerifyOutcome) -> None:
        """Adopt a step's outcome: move on within the segment, or to the next one at its end
        or at a damaged batch."""
        if step.position_in_plan != self._index:
            return
        checked = max(outcome.end_position - step.start, 0)
        self.stats.bytes_checked += checked
        self._pace(checked)
        if outcome.damage_reason is not None:
            self.stats.damaged += 1
            self._next_target()
        elif outcome.end_position >= step.target.size or checked == 0:
            self._next_target()
        else:
            self._cursor = _Cursor(outcome.end_position, outcome.next_offset)

    def skip_target(self, step: ScrubStep[K]) -> None:
        """The step's segment is gone (deleted, cut, closed): go on with the next one."""
        if step.position_in_plan == self._index:
            self._index += 1
            self._cursor = None

    def _next_target(self) -> None:
        self.stats.segments_checked += 1
        self._index += 1
        self._cursor = None

    def _pace(self, checked: int) -> None:
        start = max(self._not_before_ms, float(self._step_started_ms))
        self._not_before_ms = start + checked * 1000 / self.bytes_per_second
