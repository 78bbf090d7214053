"""One call to the controller as a retry schedule: when to try again, and when it is over.

Why a core of its own: :class:`~rillet.broker.cluster.controller_link.ControllerLink` sends
each attempt over a trio connection and the replication simulation (tests) over a scheduled
network; both run this object, so a call retries in the same way in both: an answer that
says "not the controller", a broken connection or an unanswered attempt is retried after a
bounded exponential backoff; an attempt abandoned because another controller was named is
retried at once; the call ends with the controller's answer, or with none when its deadline
passes. It touches no socket, task or clock: the caller passes the time and keeps the
deadline (``ControllerLink`` cancels the whole call then, the simulation runs a timer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

R = TypeVar("R")

INITIAL_BACKOFF_S = 0.02
MAX_BACKOFF_S = 0.5


def next_backoff_s(backoff_s: float) -> float:
    """The wait before the attempt after next: doubled, up to ``MAX_BACKOFF_S`` (the first
    is ``INITIAL_BACKOFF_S``)."""
    return min(backoff_s * 2, MAX_BACKOFF_S)


@dataclass(frozen=True, slots=True)
class Send:
    """Send the next attempt now, to the voter believed to be the controller."""


@dataclass(frozen=True, slots=True)
class Retry:
    """Wait until ``at_s`` (the caller's clock), then send the next attempt."""

    at_s: float


@dataclass(frozen=True, slots=True)
class Finished(Generic[R]):
    """The call is over: the controller's answer, or None when the deadline passed first."""

    response: R | None


class ControllerCall(Generic[R]):
    """The retry schedule of one call (one request, attempts until an answer or the
    deadline). Each event returns what the caller does next."""

    def __init__(self, deadline_s: float) -> None:
        """``deadline_s``: how long the caller lets the call run (for the message only)."""
        self.deadline_s = deadline_s
        self.backoff_s = INITIAL_BACKOFF_S
        self.failure = "no attempt"  # why the last attempt did not end the call
        self.done = False

    def start(self) -> Send:
        return Send()

    def answered(
        self, voter: int, response: R, not_controller: bool, now_s: float
    ) -> Retry | Finished[R]:
        """``voter`` answered; ``not_controller``: the answer says it is not the controller
        (the caller takes its hint)."""
        if not not_controller:
            self.done = True
            return Finished(response)
        self.failure = f"voter {voter} is not the controller"
        return self._back_off(now_s)

    def failed(self, voter: int, error: str, now_s: float) -> Retry:
        """The attempt at ``voter`` broke (connection lost, refused, or no answer within the
        request timeout)."""
        self.failure = f"voter {voter}: {error}"
        return self._back_off(now_s)

    def moved(self, voter: int, reason: str) -> Send:
        """The attempt at ``voter`` was abandoned because another controller is known: no
        backoff."""
        self.failure = f"voter {voter}: {reason}"
        return Send()

    def deadline_passed(self) -> Finished[R]:
        """The caller's deadline came before an answer: the outcome is unknown (the
        controller may have decided on an attempt whose answer was lost)."""
        self.done = True
        return Finished(None)

    def unreachable_message(self) -> str:
        """The one-line reason a call ended without an answer."""
        return f"no controller answered within {self.deadline_s:.3g}s ({self.failure})"

    def _back_off(self, now_s: float) -> Retry:
        retry = Retry(now_s + self.backoff_s)
        self.backoff_s = next_backoff_s(self.backoff_s)
        return retry
