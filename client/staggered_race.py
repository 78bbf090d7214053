"""Which node to try next, and when: a staggered race over candidate nodes.

A node that is paused (SIGSTOP) or wedged still completes TCP connects through the kernel's
listen backlog, then answers nothing: no TLS handshake, no login, no request. Trying the
bootstrap nodes one after another therefore waited out a whole timeout (10 s to connect, or
30 s for the first request) on such a node while the others could have answered within
milliseconds. Racing them instead, as RFC 8305 ("happy eyeballs") races addresses, bounds
that wait by a short delay: the first candidate starts at once; while no attempt has
succeeded, the next one starts ``stagger_s`` after the last start, or at once when an attempt
fails; the first success wins and the attempts still running are dropped.

This class decides without doing any I/O: the driver (``race_runner.py``) tells it the time
and each attempt's outcome, starts what :meth:`StaggeredRace.due` returns, and sleeps until
:attr:`StaggeredRace.next_start_s` or the next outcome.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Generic, TypeVar

T = TypeVar("T")


class StaggeredRace(Generic[T]):
    """Attempts over ``candidates`` (in order of preference), one more every ``stagger_s``."""

    def __init__(self, candidates: Sequence[T], stagger_s: float, now_s: float) -> None:
        if stagger_s < 0:
            raise ValueError("stagger_s must not be negative")
        self._waiting: deque[int] = deque(range(len(candidates)))
        self._candidates = list(candidates)
        self._stagger_s = stagger_s
        self._running: set[int] = set()
        self._next_start_s = now_s  # the first candidate starts at once
        self._winner: int | None = None

    @property
    def finished(self) -> bool:
        """True once an attempt succeeded, or every candidate was tried and failed."""
        return self._winner is not None or not (self._waiting or self._running)

    @property
    def winner(self) -> T | None:
        return None if self._winner is None else self._candidates[self._winner]

    @property
    def running(self) -> int:
        """Attempts started and not ended."""
        return len(self._running)

    @property
    def next_start_s(self) -> float | None:
        """When the next candidate is due (None: none will be, whatever happens in between,
        unless an attempt fails)."""
        if self._winner is not None or not self._waiting:
            return None
        return self._next_start_s

    def due(self, now_s: float) -> list[tuple[int, T]]:
        """The attempts to start now, as (attempt id, candidate); at most one per call
        unless nothing is running (then the next candidate starts whatever the time)."""
        if self._winner is not None or not self._waiting:
            return []
        if self._running and now_s < self._next_start_s:
            return []
        index = self._waiting.popleft()
        self._running.add(index)
        self._next_start_s = now_s + self._stagger_s
        return [(index, self._candidates[index])]

    def failed(self, attempt: int, now_s: float) -> None:
        """Attempt ``attempt`` ended without success: the next candidate is due at once."""
        self._running.discard(attempt)
        self._next_start_s = min(self._next_start_s, now_s)

    def succeeded(self, attempt: int) -> bool:
        """Attempt ``attempt`` succeeded; True if it wins (the first success does), False if
        another had already won (its result should be given up)."""
        self._running.discard(attempt)
        if self._winner is not None:
            return False
        self._winner = attempt
        return True
