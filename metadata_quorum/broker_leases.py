"""Broker liveness as leases: when each broker's session ends, as the active controller
sees it.

Why apart from the controller's decisions: a lease is leader-only memory (never a record),
renewed by heartbeats and cut short by evidence that the broker is gone (its heartbeat
connection closed, its listener refused a connection), and its rules are subtle enough to
read on their own: a lease runs a session from the last heartbeat exchange known to have
gone *both ways*, so a broker whose heartbeats arrive but which hears no answer (a one-way
cut) is fenced like a silent one. Brokers echo the last answer they heard (the answering
controller's ``key`` and clock), which needs no clock shared between nodes. The
controller asks which leases ended and decides the records; nothing here reads a clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rillet.metadata_quorum.state import MetadataState

if TYPE_CHECKING:
    from rillet.metadata_quorum.controller import ControllerConfig


@dataclass(frozen=True, slots=True)
class HeardAnswer:
    """The last heartbeat answer a broker received, as it echoes it: the answering
    controller's ``key`` (drawn anew by each controller term) and that controller's clock
    when it answered. Lets the controller tell a broker that reaches it but hears nothing
    back (a one-way cut) from a live one, with no clock shared between nodes."""

    key: int
    answered_ms: int


NO_ANSWER_HEARD = HeardAnswer(0, -1)


class BrokerLeases:
    """The leases of one controller term (begun again by :meth:`begin_term`)."""

    def __init__(self, config: ControllerConfig) -> None:
        self.config = config
        self._deadline_ms: dict[int, int] = {}
        self._heard_from: set[int] = set()  # brokers that heartbeated to this controller
        # When each broker's first heartbeat of this term arrived: until it echoes an answer
        # of this controller, its last two-way exchange is taken to be then.
        self._first_heard_ms: dict[int, int] = {}
        # When this controller last stamped a heartbeat answer for each broker this term.
        self._last_answer_ms: dict[int, int] = {}
        # The previous quorum leader's broker, until it proves it hears this controller.
        self.suspect: int | None = None
        self.answer_key = 0  # stamped on heartbeat answers; new per term
        self._activations = 0

    def begin_term(
        self,
        state: MetadataState,
        now_ms: int,
        last_contact_ms: int | None,
        previous_leader: int | None,
    ) -> None:
        """Every registered broker gets a grace period to heartbeat this new controller
        (see :meth:`Controller.on_become_leader` for ``last_contact_ms`` and
        ``previous_leader``)."""
        cfg = self.config
        deadline = now_ms + min(cfg.new_controller_grace_ms, cfg.broker_session_timeout_ms)
        if last_contact_ms is not None:
            deadline = min(deadline, last_contact_ms + cfg.broker_session_timeout_ms)
        deadline = max(
            deadline, now_ms + min(cfg.reannounce_window_ms, cfg.new_controller_grace_ms)
        )
        self._deadline_ms = dict.fromkeys(state.brokers, deadline)
        self._heard_from = set()
        self._first_heard_ms = {}
        self._last_answer_ms = {}
        self.suspect = None
        if last_contact_ms is not None and previous_leader in state.brokers:
            self.suspect = previous_leader
            self._first_heard_ms[previous_leader] = min(last_contact_ms, now_ms)
        # A new key per term, from the clock rather than the decisions' random source (whose
        # draws a seeded simulation replays); controllers of two terms differ in when they
        # became active, and one node's successive terms in the activation count too.
        self._activations += 1
        self.answer_key = (max(now_ms, 0) << 16) + (self._activations & 0xFFFF) + 1

    def registered(self, broker_id: int, now_ms: int) -> None:
        """A (new or retried) registration: a full session, and a fresh start."""
        self._deadline_ms[broker_id] = now_ms + self.config.broker_session_timeout_ms
        self._heard_from.add(broker_id)
        self._first_heard_ms[broker_id] = now_ms  # a new incarnation starts afresh
        if self.suspect == broker_id:
            self.suspect = None

    def end_soon(self, broker_id: int, at_ms: int) -> None:
        """End the lease at ``at_ms`` unless it ends sooner (or a heartbeat renews it)."""
        self._deadline_ms[broker_id] = min(self._deadline_ms.get(broker_id, at_ms), at_ms)

    def forget(self, broker_id: int) -> None:
        """A broker stopping cleanly: no lease runs any more."""
        self._deadline_ms.pop(broker_id, None)

    def expired(self, state: MetadataState, now_ms: int) -> list[int]:
        """Unfenced brokers whose lease has ended."""
        return sorted(
            b.broker_id
            for b in state.brokers.values()
            if not b.fenced and self._deadline_ms.get(b.broker_id, now_ms) <= now_ms
        )

    def next_end_ms(self, state: MetadataState) -> int | None:
        """When the first lease of an unfenced broker ends (None: no lease runs)."""
        return min(
            (
                self._deadline_ms[b.broker_id]
                for b in state.brokers.values()
                if not b.fenced and b.broker_id in self._deadline_ms
            ),
            default=None,
        )

    def awaiting_first_heartbeat(self, state: MetadataState, now_ms: int) -> list[int]:
        """Unfenced brokers not heard from this term, while their grace runs."""
        return sorted(
            b.broker_id
            for b in state.brokers.values()
            if not b.fenced
            and b.broker_id not in self._heard_from
            and self._deadline_ms.get(b.broker_id, now_ms) > now_ms
        )

    def renew(self, broker_id: int, now_ms: int, heard: HeardAnswer) -> int:
        """A heartbeat came: extend the lease (never shorten it) and return its new end."""
        lease_end = self._lease_end_ms(broker_id, now_ms, heard)
        self._deadline_ms[broker_id] = max(self._deadline_ms.get(broker_id, lease_end), lease_end)
        self._heard_from.add(broker_id)
        return lease_end

    def answered(self, broker_id: int, now_ms: int, arrived_ms: int | None = None) -> None:
        """A heartbeat answer stamped ``now_ms`` goes to ``broker_id``, for its heartbeat
        that arrived at ``arrived_ms``. An answer later than half a session (decisions
        queued behind long commits) may reach a broker that gave up waiting for it, so its
        not being echoed proves nothing: only timely answers count as given."""
        late = (
            arrived_ms is not None
            and now_ms - arrived_ms > self.config.broker_session_timeout_ms // 2
        )
        if not late:
            self._last_answer_ms[broker_id] = now_ms

    def _two_way_ms(self, broker_id: int, now_ms: int, heard: HeardAnswer) -> int:
        """The last moment a heartbeat exchange with ``broker_id`` is known to have gone
        both ways.

        - Now, when the broker has heard every answer this controller gave it (it echoes
          the latest, or none was given this term yet): a controller slow to answer, with
          decisions queued behind a long commit, must not take its own silence for the
          broker's deafness (it fenced every broker of a cluster creating 10,000
          partitions). Also now for a broker that echoes nothing (it has heard no answer
          since it started, or predates the echo): taken at its word.
        - When it echoes an older answer of this controller: when that answer was sent.
        - When it echoes an earlier controller's answer although this one answered it: the
          arrival of its first heartbeat here.
        - The previous quorum leader's broker (``begin_term``), while it echoes an earlier
          controller's answer: the quorum's last contact with that node, whether or not
          this controller answered it yet.
        """
        first = self._first_heard_ms.setdefault(broker_id, now_ms)
        last_answer = self._last_answer_ms.get(broker_id)
        if heard.key == NO_ANSWER_HEARD.key:
            return now_ms
        if broker_id == self.suspect:
            if heard.key != self.answer_key or heard.answered_ms < 0:
                return first
            self.suspect = None  # it hears this controller: the usual rules from now on
        if last_answer is None:
            return now_ms
        if heard.key == self.answer_key and heard.answered_ms >= 0:
            if heard.answered_ms >= last_answer:
                return now_ms
            return max(min(heard.answered_ms, now_ms), first)
        return first

    def _lease_end_ms(self, broker_id: int, now_ms: int, heard: HeardAnswer) -> int:
        """A session after the last two-way exchange (plus the heartbeat interval that
        its echo takes to come back), and never more than a session after now. A broker
        whose heartbeats arrive but whose answers are lost (it receives nothing: a one-way
        cut) is fenced a session after the cut, like a silent one, instead of never; a
        broker that hears the answers keeps a full session from each heartbeat."""
        cfg = self.config
        two_way = self._two_way_ms(broker_id, now_ms, heard)
        return min(
            now_ms + cfg.broker_session_timeout_ms,
            two_way + cfg.broker_session_timeout_ms + cfg.broker_heartbeat_interval_ms,
        )
