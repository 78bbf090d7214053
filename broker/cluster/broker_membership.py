"""A broker's membership in the cluster as a state machine: register, catch up, heartbeat.

Why a core of its own: :class:`~rillet.broker.cluster.broker_lifecycle.BrokerLifecycle`
runs it with the controller link and the metadata follower, and the replication simulation
(tests) with scheduled messages; both must move between the phases, time the heartbeats
and decide what an answer means in the same way. Each event returns the next action; an
event the current phase does not expect is a :class:`MembershipError` (a driver bug), as
in h11. It touches no socket, task or clock: the caller passes the time.

The phases (``TRANSITIONS`` is the whole table):

- REGISTERING: a registration is sent (``Register``); no answer (the call's deadline
  passed) sends it again at once, a refusal after ``RETRY_S``; an acceptance names the
  broker epoch.
- CATCHING_UP: wait until the local metadata has applied the registration (``CatchUp``);
  from then on ``caught_up`` holds (it is never cleared: the metadata stays at least that
  new).
- HEARTBEATING: a heartbeat now and after every answer (``Heartbeat``), timed by
  :func:`next_heartbeat_s`; an answer that says the epoch is stale (UNKNOWN_MEMBER_ID)
  starts a new membership under a new incarnation (``Register`` with ``fresh``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from rillet.broker.errors import BrokerError
from rillet.wire.error_codes import ErrorCode

RETRY_S = 0.1


class MembershipError(BrokerError):
    """An event the membership's current phase does not expect (a driver bug)."""


class Phase(enum.Enum):
    REGISTERING = "registering"
    CATCHING_UP = "catching up"
    HEARTBEATING = "heartbeating"


class Event(enum.Enum):
    REGISTERED = "registered"
    NOT_REGISTERED = "registration refused or unanswered"
    CAUGHT_UP = "caught up"
    HEARTBEAT_ANSWERED = "heartbeat answered or unanswered"
    EPOCH_STALE = "broker epoch stale"


TRANSITIONS: dict[tuple[Phase, Event], Phase] = {
    (Phase.REGISTERING, Event.REGISTERED): Phase.CATCHING_UP,
    (Phase.REGISTERING, Event.NOT_REGISTERED): Phase.REGISTERING,
    (Phase.CATCHING_UP, Event.CAUGHT_UP): Phase.HEARTBEATING,
    (Phase.HEARTBEATING, Event.HEARTBEAT_ANSWERED): Phase.HEARTBEATING,
    (Phase.HEARTBEATING, Event.EPOCH_STALE): Phase.REGISTERING,
}


@dataclass(frozen=True, slots=True)
class Register:
    """Send a registration after ``after_s``; ``fresh``: under a new incarnation id (a new
    membership), else the same request again."""

    after_s: float
    fresh: bool


@dataclass(frozen=True, slots=True)
class CatchUp:
    """Registered as ``broker_epoch``: wait until the local metadata has applied it."""

    broker_epoch: int


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Send a heartbeat after ``after_s``."""

    after_s: float


Action = Register | CatchUp | Heartbeat


def next_heartbeat_s(
    error_code: int | None, fenced: bool, interval_s: float, new_controller: bool = False
) -> float | None:
    """The heartbeat loop's step after an answer (``error_code`` None: no answer came),
    with ``fenced`` as last heard: None to register again (the epoch is stale:
    UNKNOWN_MEMBER_ID), else the seconds until the next heartbeat: the interval, or at most
    ``RETRY_S`` while fenced (unfencing should follow catching up promptly).

    ``new_controller``: the answer is the first from a controller this broker had not heard
    (its answer key is new). The next heartbeat then goes at once, echoing it: a controller
    renews the lease of the previous quorum leader's broker only once that broker echoes
    one of its answers (it may be deaf, cut off one way), counting its session from when
    the quorum last heard it. A former controller resuming from a pause shorter than the
    session (SIGSTOP, a stall) was fenced when its echo waited a heartbeat interval past
    that session's end; Kafka keeps such a broker, so the pause row cost leaderships."""
    if error_code == ErrorCode.UNKNOWN_MEMBER_ID:
        return None
    if error_code == ErrorCode.NONE and new_controller:
        return 0.0
    if error_code == ErrorCode.NONE and not fenced:
        return interval_s
    return min(interval_s, RETRY_S if fenced else interval_s)


class BrokerMembership:
    """Where a broker stands with the controller, and what it does next."""

    def __init__(self, heartbeat_interval_s: float, session_timeout_s: float) -> None:
        self.phase = Phase.REGISTERING
        self._interval_s = heartbeat_interval_s
        self._session_s = session_timeout_s
        self.broker_epoch: int | None = None  # the last one registered (kept while re-registering)
        self.caught_up = False
        self.fenced = True  # as the last heartbeat answer said
        # The last heartbeat answer received (echoed in every heartbeat: the controller
        # fences a broker that reaches it but hears nothing back) and when it came.
        self.heard = (0, -1)
        self.heard_at_s: float | None = None
        # The answer key last echoed at once: once per controller, so two controllers
        # answering in turn cannot make a loop without pauses.
        self._echoed_key = 0

    def start(self) -> Register:
        """The first membership: register under a new incarnation."""
        return Register(0.0, fresh=True)

    def registration_answered(self, error_code: int | None, broker_epoch: int = -1) -> Action:
        """The registration call ended: with the controller's answer, or with none."""
        self._check(Event.REGISTERED)
        if error_code != ErrorCode.NONE:
            self._move(Event.NOT_REGISTERED)
            return Register(0.0 if error_code is None else RETRY_S, fresh=False)
        self._move(Event.REGISTERED)
        self.broker_epoch = broker_epoch
        return CatchUp(broker_epoch)

    def metadata_caught_up(self) -> Heartbeat:
        """The local metadata has applied the registration: heartbeat now."""
        self._move(Event.CAUGHT_UP)
        self.caught_up = True
        return Heartbeat(0.0)

    def heartbeat_answered(
        self,
        error_code: int | None,
        now_s: float,
        fenced: bool = True,
        answer_key: int = 0,
        answered_ms: int = -1,
    ) -> Heartbeat | Register:
        """The heartbeat call ended: with the controller's answer (its error code, whether
        it fences this broker, its answer key and clock), or with none."""
        self._check(Event.HEARTBEAT_ANSWERED)
        new_controller = False
        if error_code == ErrorCode.NONE:
            new_controller = answer_key not in (self.heard[0], self._echoed_key)
            if new_controller:
                self._echoed_key = answer_key
            self.heard = (answer_key, answered_ms)
            self.heard_at_s = now_s
            self.fenced = fenced
        delay_s = next_heartbeat_s(error_code, self.fenced, self._interval_s, new_controller)
        if delay_s is None:
            self._move(Event.EPOCH_STALE)
            return Register(0.0, fresh=True)
        self._move(Event.HEARTBEAT_ANSWERED)
        return Heartbeat(delay_s)

    def hears_controller(self, now_s: float) -> bool:
        """Whether a heartbeat answer came within the last half session. A broker that has
        heard nothing for longer may be the one cut off: it then asks for no ISR removals
        (a deaf leader would drop healthy followers, and the controller may commit that
        before it fences the leader, leaving the partition no leader to elect)."""
        heard_at = self.heard_at_s
        return heard_at is not None and now_s - heard_at < self._session_s / 2

    def _check(self, event: Event) -> Phase:
        """The phase ``event`` leads to; a MembershipError if this phase does not expect it
        (checked before an answer changes anything)."""
        after = TRANSITIONS.get((self.phase, event))
        if after is None:
            raise MembershipError(f"{event.value!r} while {self.phase.value}")
        return after

    def _move(self, event: Event) -> None:
        self.phase = self._check(event)
