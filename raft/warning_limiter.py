"""At most one log line per source per interval, sans I/O, so that a peer that keeps failing
the handshake is visible at WARNING without being able to flood the log.

The time comes in as an argument. Sources are forgotten once their interval has passed; the
number remembered is bounded, and lines about sources beyond that bound are counted (and
reported with the next line that is written) rather than written.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class _Window:
    started_s: float
    suppressed: int = 0


class WarningLimiter:
    def __init__(self, interval_s: float, max_sources: int = 1024) -> None:
        self._interval_s = interval_s
        self._max_sources = max_sources
        self._windows: dict[str, _Window] = {}
        self._unremembered = 0  # lines suppressed because too many sources were remembered

    def allow(self, source: str, now_s: float) -> int | None:
        """None: suppress this line. Else write it, saying how many were suppressed before
        it (for this source, plus any about sources that could not be remembered)."""
        window = self._windows.get(source)
        if window is not None and now_s - window.started_s < self._interval_s:
            window.suppressed += 1
            return None
        if window is None and len(self._windows) >= self._max_sources:
            self._forget_expired(now_s)
            if len(self._windows) >= self._max_sources:
                self._unremembered += 1
                return None
        suppressed = (window.suppressed if window is not None else 0) + self._unremembered
        self._unremembered = 0
        self._windows[source] = _Window(now_s)
        return suppressed

    def _forget_expired(self, now_s: float) -> None:
        expired = [s for s, w in self._windows.items() if now_s - w.started_s >= self._interval_s]
        for source in expired:
            self._unremembered += self._windows.pop(source).suppressed
