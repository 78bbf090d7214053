"""One call to the controller as a retry schedule (when to try again, and when it is
over), and the link's choice of the voter each attempt goes to.

Why a core of its own: :class:`~rillet.broker.cluster.controller_link.ControllerLink` sends
each attempt over a trio connection and the replication simulation (tests) over a scheduled
network to several voters; both run these objects, so a call retries in the same way in
both: an answer that says "not the controller", a broken connection or an attempt
unanswered within the per-attempt timeout is retried after a bounded exponential backoff;
an attempt abandoned because another controller was named is retried at once; the call ends
with the controller's answer, or with none when its deadline passes. The next attempt goes
to the voter the local quorum names, else to the one the last NOT_CONTROLLER answer named
(or the last one that answered), else to the next voter in turn (:class:`VoterChoice`).
Nothing here touches a socket, task or clock: the caller passes the time and keeps the
deadlines (``ControllerLink`` cancels an attempt or the whole call then, the simulation
runs timers).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from rillet.wire.error_codes import ErrorCode

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
    """The call is over: the controller's answer, or None when the deadline passed first.

    ``after_unanswered``: an earlier attempt went out and got no answer (it broke, timed
    out, or was abandoned for another controller). A voter may still carry that attempt
    out (its bytes may sit in a socket buffer, its record in a deposed controller's log
    that the next one commits), so a refusal of a later attempt does not prove that the
    request never takes effect."""

    response: R | None
    after_unanswered: bool = False


class ControllerCall(Generic[R]):
    """The retry schedule of one call (one request, attempts until an answer or the
    deadline). Each event returns what the caller does next."""

    def __init__(self, deadline_s: float) -> None:
        """``deadline_s``: how long the caller lets the call run (for the message only)."""
        self.deadline_s = deadline_s
        self.backoff_s = INITIAL_BACKOFF_S
        self.failure = "no attempt"  # why the last attempt did not end the call
        self.unanswered_attempts = 0  # attempts sent that got no answer
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
            return Finished(response, self.unanswered_attempts > 0)
        self.failure = f"voter {voter} is not the controller"
        return self._back_off(now_s)

    def failed(self, voter: int, error: str, now_s: float) -> Retry:
        """The attempt at ``voter`` broke (connection lost, refused, or no answer within the
        request timeout)."""
        self.failure = f"voter {voter}: {error}"
        self.unanswered_attempts += 1
        return self._back_off(now_s)

    def moved(self, voter: int, reason: str) -> Send:
        """The attempt at ``voter`` was abandoned because another controller is known: no
        backoff."""
        self.failure = f"voter {voter}: {reason}"
        self.unanswered_attempts += 1
        return Send()

    def deadline_passed(self) -> Finished[R]:
        """The caller's deadline came before an answer: the outcome is unknown (the
        controller may have decided on an attempt whose answer was lost)."""
        self.done = True
        return Finished(None, after_unanswered=True)

    def unreachable_message(self) -> str:
        """The one-line reason a call ended without an answer."""
        return f"no controller answered within {self.deadline_s:.3g}s ({self.failure})"

    def _back_off(self, now_s: float) -> Retry:
        retry = Retry(now_s + self.backoff_s)
        self.backoff_s = next_backoff_s(self.backoff_s)
        return retry


class VoterChoice:
    """Which voter a link's next attempt goes to. One per link, kept across its calls: a
    broker goes on calling the voter that answered as the controller, follows the leader a
    NOT_CONTROLLER answer names, and tries the voters in turn when it knows of none."""

    def __init__(self, voters: Iterable[int]) -> None:
        self._voters = sorted(voters)
        self._hint: int | None = None  # named by the last answer, or the voter that gave it
        self.answered_by: int | None = None  # the voter whose answer was taken last
        self._next = 0

    def learn_voter(self, node_id: int) -> None:
        """A voter added at run time: it may become the controller."""
        if node_id not in self._voters:
            self._voters = sorted([*self._voters, node_id])

    def hint(self, local: int | None) -> int | None:
        """The voter believed to be the controller: the one the local quorum names
        (``local``, None on a node without one), else the one answers named; or None."""
        return local if local is not None else self._hint

    def target(self, local: int | None) -> int:
        """The voter the next attempt goes to."""
        hint = self.hint(local)
        if hint is not None and hint in self._voters:
            return hint
        self._next = (self._next + 1) % len(self._voters)
        return self._voters[self._next]

    def answered(self, voter: int, not_controller: int | None) -> None:
        """``voter`` answered; ``not_controller``: None when it answered as the controller,
        else the controller it names (-1: none)."""
        if not_controller is None:
            self._hint = self.answered_by = voter
        elif not_controller in self._voters and not_controller != voter:
            self._hint = not_controller
        else:
            self._hint = None

    def failed(self, voter: int) -> None:
        """The attempt at ``voter`` broke or went unanswered: it may be gone, try another."""
        self._hint = None


def not_controller_hint(response: Any) -> int | None:
    """How a link reads an answer by default: None when it is the controller's, else the
    controller it names (-1: none), from its ``error_code`` and ``controller_id``."""
    if getattr(response, "error_code", ErrorCode.NONE) == ErrorCode.NOT_CONTROLLER:
        return int(getattr(response, "controller_id", -1))
    return None
