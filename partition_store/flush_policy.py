"""When a log needs an fsync, and which completed fsyncs may advance its recovery point.

Pure bookkeeping, apart from the log so the policy reads on its own. The defaults follow
Kafka: never force an fsync on the write path (durability comes from replication and the
page cache), but flush a segment once it is rolled, so the recovery point — and with it the
amount of log a crash makes us re-validate — keeps up. ``flush_messages`` and ``flush_ms``
force fsyncs sooner.

A flush runs while appends (and even truncations) continue, so completions are checked:
a truncation bumps :attr:`generation`, and a plan from an older generation proves nothing
about the offsets appended since.
"""

from __future__ import annotations

from rillet.partition_store.config import LogConfig


class FlushPolicy:
    def __init__(
        self, config: LogConfig, recovery_point: int, log_end_offset: int, now_ms: int
    ) -> None:
        self.config = config
        self.recovery_point = recovery_point  # offsets below it are fsynced
        self.generation = 0
        self.plans_made = 0
        # Time of the oldest append not yet covered by the recovery point (flush_ms).
        self._oldest_unflushed_ms = now_ms if log_end_offset > recovery_point else None
        # Time of the first append after the newest plan: the oldest unflushed append once
        # that plan completes.
        self._first_append_since_plan_ms: int | None = None

    def on_append(self, now_ms: int) -> None:
        if self._oldest_unflushed_ms is None:
            self._oldest_unflushed_ms = now_ms
        if self._first_append_since_plan_ms is None:
            self._first_append_since_plan_ms = now_ms

    def needs_flush(self, now_ms: int, log_end_offset: int, sealed_end_offset: int) -> bool:
        """``sealed_end_offset``: where the last non-active segment ends (its roll point)."""
        unflushed = log_end_offset - self.recovery_point
        if unflushed <= 0:
            return False
        if sealed_end_offset > self.recovery_point:
            return True
        cfg = self.config
        if 0 < cfg.flush_messages <= unflushed:
            return True
        oldest = self._oldest_unflushed_ms
        return cfg.flush_ms >= 0 and oldest is not None and now_ms - oldest >= cfg.flush_ms

    def on_plan(self) -> int:
        """A plan is being made; returns its sequence number (unique within this log)."""
        self.plans_made += 1
        self._first_append_since_plan_ms = None
        return self.plans_made

    def adopt(self, generation: int, up_to_offset: int, log_end_offset: int, now_ms: int) -> bool:
        """Whether a completed plan advances the recovery point (and if so, advance it)."""
        if generation != self.generation or up_to_offset <= self.recovery_point:
            return False
        self.recovery_point = up_to_offset
        if log_end_offset <= up_to_offset:
            self._oldest_unflushed_ms = None
        else:
            self._oldest_unflushed_ms = self._first_append_since_plan_ms or now_ms
        return True

    def on_truncation(self, recovery_point: int, log_end_offset: int) -> None:
        """The log was cut; plans made before now are stale."""
        self.generation += 1
        self.recovery_point = recovery_point
        if log_end_offset <= recovery_point:
            self._oldest_unflushed_ms = None
