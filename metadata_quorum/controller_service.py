"""The controller's trio driver: active only while this member leads the quorum.

On becoming leader it first applies every committed entry (so it decides on the latest
state), then starts a fresh :class:`Controller`, which gives every broker a full session to
heartbeat. Decisions are serialized: one decision is proposed and applied before the next is
taken. When leadership is lost the running controller is cancelled and its leader-only state
discarded; requests in flight get NotLeaderError or ProposalOutcomeUnknown, and callers
retry against the new controller (decisions are idempotent against the committed state).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable

import trio

from rillet.metadata_quorum.broker_leases import NO_ANSWER_HEARD, HeardAnswer
from rillet.metadata_quorum.classic_group_answers import HeldAnswers
from rillet.metadata_quorum.controller import Controller, ControllerConfig
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.entry_split import split_records
from rillet.metadata_quorum.features import bootstrap_records
from rillet.metadata_quorum.follower import MetadataFollower
from rillet.metadata_quorum.heartbeat_exchange import answer_stamp, heartbeat_arrived
from rillet.metadata_quorum.listener_probe import PROBE_INTERVAL_S, listener_refuses
from rillet.metadata_quorum.records import (
    ControllerActivated,
    FenceBroker,
    MetadataRecord,
    encode_entry,
)
from rillet.metadata_quorum.state import MetadataState
from rillet.raft.errors import NotLeaderError, ProposalOutcomeUnknown, RaftError
from rillet.raft.quorum import Leadership, Quorum

log = logging.getLogger(__name__)

DecideFn = Callable[[Controller, MetadataState, int], Decision]
# The shortest wait between two ticks, also when a lease ended already (its fence is being
# committed by the tick before): never a busy loop.
MIN_TICK_S = 0.01


class ControllerService:
    def __init__(
        self,
        quorum: Quorum,
        follower: MetadataFollower,
        config: ControllerConfig,
        rng: random.Random,
        clock_ms: Callable[[], int],
        tick_interval_ms: int = 500,
        listener_refuses: Callable[[str, int], Awaitable[bool]] = listener_refuses,
        on_commit_s: Callable[[float], None] | None = None,
        election_timeout_min_ms: int = 0,
    ) -> None:
        """``listener_refuses(host, port)``: whether a broker's listener refuses a
        connection (the probe of silent brokers; tests give their own). ``on_commit_s`` is
        told, for every entry this controller proposes, the seconds from proposing it to
        its commit (the Raft append-latency metric). ``election_timeout_min_ms``: the
        quorum's; with it, a new controller counts a silent broker's session from when this
        member lost the previous leader (see ``Controller.on_become_leader``)."""
        self._follower = follower
        self._quorum = quorum
        self._config = config
        self._rng = rng
        self._clock_ms = clock_ms
        self._tick_s = tick_interval_ms / 1000
        self._listener_refuses = listener_refuses
        self._on_commit_s = on_commit_s
        self._election_timeout_min_ms = election_timeout_min_ms
        self._leader_lost_ms: int | None = None  # when this member last lost a leader
        self._lost_leader: int | None = None  # and which
        self._controller: Controller | None = None
        self._lead_nursery: trio.Nursery | None = None  # tasks of the current term
        self._lease_moved = trio.Event()  # a broker's lease may now end sooner
        self._lock = trio.Lock()
        self._queue: list[_Pending] = []  # commuting decisions waiting for the next entry
        self._flushing = False
        self._flushed = trio.Event()
        self.terms_led: list[int] = []
        # Held classic-group requests (JoinGroup, SyncGroup) waiting for their answers.
        self.classic_answers = HeldAnswers()

    @property
    def active(self) -> bool:
        return self._controller is not None

    async def run(self) -> None:
        """Follow leadership forever: lead while leader, stand by otherwise."""
        while True:
            lead = self._quorum.leadership()
            if lead.leader_id != self._quorum.node_id:
                await self._quorum.wait_for_leadership_change(lead)
                if lead.leader_id is not None:  # this member stopped following that leader
                    self._leader_lost_ms = self._clock_ms()
                    self._lost_leader = lead.leader_id
                continue
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._stop_on_leadership_change, lead, nursery.cancel_scope)
                try:
                    await self._lead(lead.term, nursery)
                except RaftError as exc:
                    # A tick's records were not committed (leadership moving, or no majority
                    # within the commit timeout): whatever this controller decided may not
                    # have happened, so it starts over from the committed state if this
                    # member still leads. A member the quorum already reports deposed stops
                    # now (the driver reports that as soon as it learns it).
                    if self._quorum.leadership() != lead:
                        log.info("controller for term %d stops: %s", lead.term, exc)
                    else:
                        log.warning("controller for term %d restarts: %s", lead.term, exc)
                        await trio.sleep(self._tick_s)  # leadership may be changing
                finally:
                    # Closed to new tasks from here on, also when the node is stopping (a
                    # connection closing meanwhile must not start a probe in it).
                    self._lead_nursery = None
                nursery.cancel_scope.cancel()
            if self._controller is not None:  # held requests go and find the next one
                self.classic_answers.deliver(self._controller.classic_groups.abandon())
            self._controller = None
            log.info("controller for term %d stopped", lead.term)

    async def _stop_on_leadership_change(self, lead: Leadership, scope: trio.CancelScope) -> None:
        await self._quorum.wait_for_leadership_change(lead)
        scope.cancel()

    async def _lead(self, term: int, nursery: trio.Nursery) -> None:
        barrier = ControllerActivated(self._quorum.node_id, term)
        await self._follower.wait_applied(await self._quorum.propose(encode_entry([barrier])))
        if bootstrap := bootstrap_records(self._follower.state):  # a new cluster's level
            await self._follower.wait_applied(await self._quorum.propose(encode_entry(bootstrap)))
        controller = Controller(self._config, self._rng)
        # This member's election timer fired at least election_timeout_min_ms after it last
        # heard from the previous leader: that is a safe "last contact".
        # (Only the loss that led to this election counts: one older than a session is
        # another story, and the plain grace applies.)
        now, lost = self._clock_ms(), self._leader_lost_ms
        last_contact = None
        if lost is not None and now - lost <= self._config.broker_session_timeout_ms:
            last_contact = lost - self._election_timeout_min_ms
        previous = self._lost_leader if last_contact is not None else None
        controller.on_become_leader(self._follower.state, now, last_contact, previous)
        self._controller = controller
        self._lead_nursery = nursery
        self.terms_led.append(term)
        log.info("controller active for term %d", term)
        nursery.start_soon(self._probe_silent_brokers, controller)
        while True:
            self._lease_moved = trio.Event()
            with trio.move_on_after(self._until_next_tick_s(controller)):
                await self._lease_moved.wait()
                continue  # a lease now ends sooner: compute the wait again
            await self.submit(lambda ctl, state, now: ctl.tick(state, now))

    def _until_next_tick_s(self, controller: Controller) -> float:
        """The regular tick interval, or less when a broker's lease ends before it (at
        least MIN_TICK_S: a lease that ended is fenced by the tick that follows)."""
        lease_end_ms = controller.next_lease_end_ms(self._follower.state)
        if lease_end_ms is None:
            return self._tick_s
        until_s = (lease_end_ms - self._clock_ms()) / 1000
        return min(self._tick_s, max(until_s, MIN_TICK_S))

    async def _probe_silent_brokers(self, controller: Controller) -> None:
        """While a new controller's grace runs, probe the listeners of the brokers it has
        not heard from: a refused connection means no process serves there (the broker died,
        often with the previous controller), and its partitions move at once instead of
        after the grace. Brokers that are paused or cut off do not refuse; the grace, then
        the session timeout, still covers them."""
        while True:
            state = self._follower.state
            silent = [
                b
                for b in controller.awaiting_first_heartbeat(state, self._clock_ms())
                if b != self._quorum.node_id
            ]
            if not silent:
                return
            refused: list[int] = []
            async with trio.open_nursery() as probes:
                for broker_id in silent:
                    probes.start_soon(self._probe, controller, state, broker_id, refused)
            if refused:
                log.info(
                    "broker(s) %s refuse connections on their listener: fencing them now",
                    ", ".join(map(str, sorted(refused))),
                )
                try:
                    await self.submit(lambda ctl, st, now: ctl.tick(st, now))
                except RaftError as exc:  # the tick loop meets it too and restarts
                    log.debug("tick after a refused probe failed: %s", exc)
                    return
            await trio.sleep(PROBE_INTERVAL_S)

    async def _probe(
        self, controller: Controller, state: MetadataState, broker_id: int, refused: list[int]
    ) -> None:
        broker = state.brokers.get(broker_id)
        if broker is None:
            return
        if await self._listener_refuses(broker.host, broker.port):
            controller.listener_refused(state, broker_id, broker.broker_epoch, self._clock_ms())
            refused.append(broker_id)

    def member_connection_lost(self, group_id: str, member_id: str) -> None:
        """A consumer-group member's connection to this node closed."""
        if self._controller is not None:
            self._controller.groups.connection_lost(
                self._follower.state, group_id, member_id, self._clock_ms()
            )

    def feature_levels(self, state: MetadataState) -> dict[int, int] | None:
        """Per registered broker, the feature level it supports as this controller knows
        it (None when not leading: only the controller hears heartbeats)."""
        return None if self._controller is None else self._controller.features.levels(state)

    def broker_heartbeat_arrived(
        self,
        broker_id: int,
        broker_epoch: int,
        heard: HeardAnswer = NO_ANSWER_HEARD,
        max_feature_level: int = 0,
    ) -> None:
        """A broker heartbeat reached this node: its lease runs from now, whatever the wait
        for the decision it asks for (from the last exchange that went both ways); the
        feature level it supports is noted for raising the cluster's level."""
        if self._controller is not None:
            heartbeat_arrived(
                self._controller,
                self._follower.state,
                broker_id,
                broker_epoch,
                self._clock_ms(),
                heard,
                max_feature_level,
            )

    def answer_stamp(self, broker_id: int, arrived_ms: int | None = None) -> HeardAnswer:
        """What a heartbeat answer to ``broker_id`` (its heartbeat arrived at
        ``arrived_ms``) carries for it to echo (none when not leading); the controller notes
        it as the latest answer that broker was given, if timely."""
        controller = self._controller
        if controller is None:
            return NO_ANSWER_HEARD
        return answer_stamp(controller, broker_id, self._clock_ms(), arrived_ms)

    def broker_connection_lost(self, broker_id: int, broker_epoch: int) -> None:
        """A registered broker's heartbeat connection to this node closed: its lease ends
        after a short grace, or at once if its listener refuses connections (the process
        is gone: a killed process's sockets all close together)."""
        controller = self._controller
        if controller is None:
            return
        state = self._follower.state
        controller.connection_lost(state, broker_id, broker_epoch, self._clock_ms())
        self._lease_moved.set()  # its lease may now end before the next regular tick
        broker = state.brokers.get(broker_id)
        if self._lead_nursery is not None and broker is not None and not broker.fenced:
            self._lead_nursery.start_soon(self._probe_after_loss, controller, broker_id)

    async def _probe_after_loss(self, controller: Controller, broker_id: int) -> None:
        refused: list[int] = []
        await self._probe(controller, self._follower.state, broker_id, refused)
        if refused and controller is self._controller:
            log.info("broker %d refuses connections on its listener: fencing it now", broker_id)
            try:
                await self.submit(lambda ctl, st, now: ctl.tick(st, now))
            except RaftError as exc:  # the tick loop meets it too and restarts
                log.debug("tick after a refused probe failed: %s", exc)

    async def submit(self, decide: DecideFn) -> Decision:
        """Take one decision on the current state, commit its records and wait until applied.

        Raises NotLeaderError when this member is not the active controller.
        """
        async with self._lock:
            controller = self._controller
            if controller is None:
                lead = self._quorum.leadership()
                raise NotLeaderError(lead.leader_id, lead.term)
            decision = decide(controller, self._follower.state, self._clock_ms())
            if decision.records:
                # One entry per decision when it is small: a fence and the leader changes it
                # implies commit together. A large one is cut into bounded entries whose
                # every prefix is safe (entry_split); the lock keeps other decisions out
                # from between them.
                try:
                    await self._commit(decision.records)
                except BaseException:
                    # Answers staged for these records must not leave as if committed.
                    self.classic_answers.deliver(controller.classic_groups.abandon())
                    raise
                for record in decision.records:
                    if isinstance(record, FenceBroker):
                        log.info(
                            "fenced broker %d (epoch %d)", record.broker_id, record.broker_epoch
                        )
            # Classic-group answers leave only once what they announce is committed.
            self.classic_answers.deliver(controller.classic_groups.take_answers())
            return decision

    async def _commit(self, records: list[MetadataRecord]) -> None:
        """Propose ``records`` in entries of at most ``max_records_per_batch``, in order,
        and return once the last is applied here."""
        index = 0
        for entry in split_records(records, self._config.max_records_per_batch):
            started_s = trio.current_time()
            index = await self._quorum.propose(encode_entry(entry))
            if self._on_commit_s is not None:
                self._on_commit_s(trio.current_time() - started_s)
        await self._follower.wait_applied(index)

    async def submit_commuting(self, decide: DecideFn) -> Decision:
        """Like :meth:`submit`, for decisions whose records commute with each other (offset
        commits: the last one for a partition wins, and none affects another's validity).

        Such decisions queue while an entry is in flight and are then taken together, each
        on the committed state, and committed as one entry: many commits per Raft round trip
        (group commit) instead of one.
        """
        pending = _Pending(decide)
        self._queue.append(pending)
        while not pending.done:
            if self._flushing:
                await self._flushed.wait()
                continue
            self._flushing = True
            try:
                await self._flush_queue()
            finally:
                self._flushing = False
                self._flushed.set()
                self._flushed = trio.Event()
        if pending.error is not None:
            raise pending.error
        assert pending.decision is not None
        return pending.decision

    async def _flush_queue(self) -> None:
        batch, self._queue = self._queue, []
        committed = False
        try:
            async with self._lock:
                controller = self._controller
                if controller is None:
                    lead = self._quorum.leadership()
                    raise NotLeaderError(lead.leader_id, lead.term)
                now = self._clock_ms()
                state = self._follower.state
                for p in batch:
                    p.decision = p.decide(controller, state, now)
                records = [r for p in batch if p.decision is not None for r in p.decision.records]
                if records:
                    await self._commit(records)
                committed = True
        except Exception as exc:  # every decision of the batch shares its fate
            for p in batch:
                p.error = exc
        finally:  # also when the flushing task is cancelled: its batch must not hang
            for p in batch:
                if not committed and p.error is None:
                    p.error = ProposalOutcomeUnknown("the batch was abandoned")
                p.done = True


class _Pending:
    __slots__ = ("decide", "decision", "done", "error")

    def __init__(self, decide: DecideFn) -> None:
        self.decide = decide
        self.decision: Decision | None = None
        self.error: Exception | None = None
        self.done = False
