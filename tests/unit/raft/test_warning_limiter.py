"""Rate-limited warnings, without a clock: one line per source per interval, with the number
of lines suppressed since; a bounded number of sources remembered."""

from __future__ import annotations

from rillet.raft.warning_limiter import WarningLimiter


def test_one_line_per_source_per_interval_with_the_suppressed_count() -> None:
    limiter = WarningLimiter(interval_s=10.0)
    assert limiter.allow("10.0.0.1", 0.0) == 0
    assert [limiter.allow("10.0.0.1", t) for t in (1.0, 2.0, 9.9)] == [None, None, None]
    assert limiter.allow("10.0.0.2", 5.0) == 0  # each source has its own window
    assert limiter.allow("10.0.0.1", 10.0) == 3
    assert limiter.allow("10.0.0.1", 20.5) == 0


def test_sources_beyond_the_bound_are_counted_not_remembered() -> None:
    limiter = WarningLimiter(interval_s=10.0, max_sources=2)
    assert limiter.allow("a", 0.0) == 0 and limiter.allow("b", 0.0) == 0
    assert limiter.allow("c", 1.0) is None  # a and b still in their windows
    assert limiter.allow("a", 2.0) is None
    assert limiter.allow("d", 11.0) == 2  # a and b expired: c's line and a's are reported
