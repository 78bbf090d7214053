"""``RaftCore``: our own Raft, as a pure state machine in the etcd-raft style.

The driver feeds it messages (``step``), time (``tick``) and requests (``propose``,
``read_index``, ``transfer_leadership``, ``compact``), then collects a ``Ready`` (what to
persist, whether to fsync, what to send, what to apply), carries it out and calls
``advance``. The core never does I/O, never reads a clock, never starts a thread and draws
randomness only from the ``random.Random`` it is given, so the same inputs always give the
same outputs: that is what lets the simulator replay a failing run from its seed.

Terms are checked here, once, before any role sees a message:

* a message of a newer term makes us a follower of that term (except pre-votes, which
  change no term, and (pre-)votes ignored under a leader's lease);
* a message of an older term is dropped -- except that a stale leader's append or heartbeat
  is answered with our term, so that it steps down, and a stale pre-vote is refused, so that
  its sender stops waiting.
"""

from __future__ import annotations

from rillet.raft.core_errors import CoreContractError, ProposalDropped
from rillet.raft.election import CampaignKind
from rillet.raft.errors import NotLeaderError
from rillet.raft.membership import Configuration
from rillet.raft.membership_change import Membership
from rillet.raft.messages import (
    AppendEntries,
    AppendResponse,
    Heartbeat,
    HeartbeatResponse,
    InstallSnapshot,
    LogEntry,
    Message,
    ReadIndexRequest,
    ReadIndexResponse,
    TimeoutNow,
    VoteRequest,
    VoteResponse,
)
from rillet.raft.quorum import Snapshot
from rillet.raft.raft_log import RaftLog
from rillet.raft.read_index import ReadState
from rillet.raft.ready import Ready, Role, Status

__all__ = ["RaftCore"]


class RaftCore(Membership):
    """One replica's Raft state: ``RaftCore(node_id, voters, storage_view, config, rng,
    applied_index=None, *, directory_id="", observers=())``. ``storage_view`` is the storage
    the driver persists Readys into; on a restart, the same storage (what survived) restores
    term, vote, snapshot and log, and committed entries after ``applied_index`` (default:
    the snapshot's) are handed out again for applying. ``voters`` is the bootstrap
    configuration, in effect until the log holds a configuration entry (or a snapshot one);
    ``directory_id`` is this replica's identity beside its node id; ``observers`` are the
    replicas a leader sends the log to whether they vote or not."""

    # -- inputs -------------------------------------------------------------------------

    def tick(self) -> None:
        """One unit of logical time (the driver decides how long that is)."""
        if self.role is Role.LEADER:
            self.tick_heartbeat()
            self.tick_catch_up()
        else:
            self.tick_election()
        self.maybe_step_down_after_removal()

    def step(self, message: Message) -> None:
        """Feed one message from a peer. Messages not addressed to us, of a stale term,
        duplicated or reordered are absorbed without harm. Any replica may send (a voter
        just added, an observer answering appends); only voters' votes and acknowledgements
        count."""
        if message.recipient != self.id or message.sender == self.id:
            return
        if message.term > self.term:
            if not self._accept_newer_term(message):
                return
        elif message.term < self.term:
            self._step_stale(message)
            return
        self._dispatch(message)
        self.sync_members()
        self.maybe_step_down_after_removal()

    def campaign(self, kind: CampaignKind = CampaignKind.PRE_ELECTION) -> None:
        """Start an election now (tests, preferred-leader moves). A leader ignores this."""
        if self.role is Role.LEADER:
            return
        if kind is CampaignKind.PRE_ELECTION and not self.config.pre_vote:
            kind = CampaignKind.ELECTION
        super().campaign(kind)

    def propose(self, data: bytes) -> LogEntry:
        """Append ``data`` to the leader's log; returns the entry (index and term) so the
        caller can recognise it among committed entries. If an entry of another term turns
        up at that index, the proposal was lost. Raises NotLeaderError with a leader hint."""
        if self.role is not Role.LEADER:
            raise NotLeaderError(self.leader_id, self.term)
        if self.transfer_target is not None:
            raise ProposalDropped(f"leadership is moving to node {self.transfer_target}")
        entry = LogEntry(self.log.last_index() + 1, self.term, bytes(data))
        self.log.append([entry])
        self.broadcast_pending = True
        return entry

    def read_index(self, context: bytes) -> None:
        """Ask for a linearizable read; a ReadState with ``context`` and the index to wait
        for comes back in a later Ready. On a follower the request goes to the leader."""
        if self.role is Role.LEADER:
            self.handle_read_request(self.id, bytes(context))
        elif self.role is Role.FOLLOWER and self.leader_id is not None:
            self.send(ReadIndexRequest(self.term, self.id, self.leader_id, bytes(context)))
        else:
            raise NotLeaderError(self.leader_id, self.term)

    def transfer_leadership(self, target: int) -> None:
        """Hand leadership to ``target`` (graceful shutdown, preferred leader). Proposals are
        refused meanwhile; the transfer is abandoned after an election timeout."""
        if self.role is not Role.LEADER:
            raise NotLeaderError(self.leader_id, self.term)
        if target not in self.voters:
            raise CoreContractError(f"node {target} is not a voter")
        if target == self.id:
            self.transfer_target = None
            return
        if self.transfer_target == target:
            return
        self.transfer_target = target
        self.election_elapsed_ticks = 0
        if self.tracker.progress[target].match_index == self.log.last_index():
            self.send(TimeoutNow(self.term, self.id, target))
        else:
            self.send_append(target)

    def compact(self, snapshot: Snapshot) -> None:
        """Register a snapshot of the applied state; the next Ready hands it back as
        ``compaction`` for the driver to persist, after which the entries it covers are gone
        and followers that still need them receive the snapshot instead."""
        if snapshot.index > self.log.applied:
            raise CoreContractError(
                f"snapshot {snapshot.index} covers unapplied entries (applied {self.log.applied})"
            )
        if snapshot.index <= self.log.snapshot().index:
            raise CoreContractError(f"snapshot {snapshot.index} is not newer than the last one")
        if self.log.term(snapshot.index) != snapshot.term:
            raise CoreContractError(f"snapshot term {snapshot.term} disagrees with the log")
        voters = self.log.configs.at(snapshot.index).encode()
        self.log.pending_compaction = Snapshot(snapshot.index, snapshot.term, snapshot.data, voters)

    def set_observers(self, observers: frozenset[int]) -> None:
        """The replicas that receive the log whether they vote or not (the driver's address
        book: nodes that joined as observers). A leader starts or stops replicating to them
        at once; voters among them are simply voters."""
        if any(n < 1 for n in observers):
            raise CoreContractError("node ids start at 1")
        self.static_observers = frozenset(observers) - {self.id}
        self.sync_members()
        if self.role is Role.LEADER:
            self.broadcast_pending = True

    def report_leader_down(self, peer: int) -> None:
        """The driver has proof that ``peer``'s process is not running (a connection to
        its port was refused). A follower of ``peer`` then forgets it and campaigns (pre-vote
        first, when configured) within a few ticks instead of after a whole election
        timeout. Ignored on leaders, (pre-)candidates and for anyone but our leader. Safety
        never depends on it: a wrong report only starts an election early, and with pre-vote
        (the default) one that needs a majority that has not heard from a leader."""
        self.leader_down(peer)

    # -- the Ready loop -----------------------------------------------------------------

    def has_ready(self) -> bool:
        if self._outstanding is not None:
            return False
        return bool(
            self.outbox
            or self.read_states
            or self.broadcast_pending
            or self.log.unstable.entries
            or self.log.unstable.snapshot is not None
            or self.log.pending_compaction is not None
            or self.log.has_entries_to_apply()
            or self.hard_state() != self._prev_hard_state
            or self.soft_state() != self._prev_soft_state
        )

    def ready(self) -> Ready:
        if self._outstanding is not None:
            raise CoreContractError("advance() the previous Ready before asking for another")
        self.flush_broadcast()
        soft_state = self.soft_state()
        hard_state = self.hard_state()
        committed = tuple(self.log.entries_to_apply(self.config.max_apply_bytes))
        prev = self._prev_hard_state
        ready = Ready(
            soft_state=soft_state if soft_state != self._prev_soft_state else None,
            hard_state=hard_state if hard_state != prev else None,
            entries=tuple(self.log.unstable.entries),
            snapshot=self.log.unstable.snapshot,
            compaction=self.log.pending_compaction,
            must_sync=self.syncs_before_sending()
            and bool(
                self.log.unstable.entries
                or self.log.unstable.snapshot is not None
                or self.log.pending_compaction is not None
                or hard_state.term != prev.term
                or hard_state.vote != prev.vote
            ),
            messages=tuple(self.outbox),
            committed_entries=committed,
            read_states=tuple(self.read_states),
        )
        self.outbox = []
        self.read_states = []
        self._prev_soft_state = soft_state
        self._prev_hard_state = hard_state
        if committed:
            self.log.applying = committed[-1].index
        self._outstanding = ready
        return ready

    def advance(self, ready: Ready) -> None:
        """The driver carried out ``ready``: what it persisted is now stable, what it applied
        is applied. A leader now counts its own newly durable entries toward commit."""
        if ready is not self._outstanding:
            raise CoreContractError("advance() takes the Ready last returned by ready()")
        self._outstanding = None
        if ready.snapshot is not None:
            self.log.stable_snapshot_to(ready.snapshot.index)
            self.log.applied_to(ready.snapshot.index)
        if ready.compaction is not None and self.log.pending_compaction is ready.compaction:
            self.log.pending_compaction = None
        if ready.entries:
            last = ready.entries[-1]
            self.log.stable_to(last.index, last.term)
        if ready.committed_entries:
            self.log.applied_to(ready.committed_entries[-1].index)
        if ready.compaction is not None:
            self.log.configs.compact_to(ready.compaction.index)
        self.self_persisted()
        if ready.hard_state is not None:
            self.take_up_election_won_alone(ready.hard_state.term, ready.hard_state.vote)
        self.maybe_step_down_after_removal()

    # -- observation --------------------------------------------------------------------

    @property
    def raft_log(self) -> RaftLog:
        """Read-only use: checkers and tests inspect the log through this."""
        return self.log

    def voter_progress(self) -> dict[int, tuple[int, int]]:
        """On the leader, voter -> (match index, ticks since it was last heard from); the
        leader itself matches its whole log and is never quiet. Empty on other roles."""
        return self._replica_progress(voting=True)

    def observer_progress(self) -> dict[int, tuple[int, int]]:
        """On the leader, the same for the replicas that do not vote (observers and a
        replica catching up to join)."""
        return self._replica_progress(voting=False)

    def _replica_progress(self, voting: bool) -> dict[int, tuple[int, int]]:
        if self.role is not Role.LEADER:
            return {}
        voters = self.voters
        out = {
            n: (p.match_index, p.quiet_ticks)
            for n, p in self.tracker.progress.items()
            if (n in voters) == voting
        }
        if (self.id in voters) == voting:
            out[self.id] = (self.log.last_index(), 0)
        return out

    def configuration(self) -> Configuration:
        """The voter set in effect here (the latest configuration entry in the log)."""
        return self.log.configuration()

    def status(self) -> Status:
        progress = {}
        if self.role is Role.LEADER:
            progress = {v: p.describe() for v, p in sorted(self.tracker.progress.items())}
        return Status(
            node_id=self.id,
            role=self.role,
            term=self.term,
            vote=self.vote,
            leader_id=self.leader_id,
            commit_index=self.log.committed,
            applied_index=self.log.applied,
            first_index=self.log.first_index(),
            last_index=self.log.last_index(),
            last_term=self.log.last_term(),
            persisted_index=self.log.persisted_index(),
            progress=progress,
            transferring_to=self.transfer_target,
            configuration=self.log.configuration().describe(),
            configuration_index=self.log.configuration_index(),
        )

    # -- internals ----------------------------------------------------------------------

    def _accept_newer_term(self, message: Message) -> bool:
        if isinstance(message, VoteRequest):
            if not message.transfer and self.in_lease():
                return False  # we trust our leader; do not let this candidate depose it
            if message.pre_vote:
                return True  # answer without changing our term
        if isinstance(message, VoteResponse) and message.pre_vote and message.granted:
            return True  # the term is the one we proposed, not yet ours
        if isinstance(message, AppendEntries | Heartbeat | InstallSnapshot):
            self.become_follower(message.term, message.sender)
        elif isinstance(message, VoteRequest):
            # Adopt the term, but keep our election timer running (the paper resets it only
            # on hearing from a leader or granting a vote): a candidate whose log is too
            # short to win must not keep better candidates from ever timing out.
            elapsed_ticks = self.election_elapsed_ticks
            timeout_ticks = self.randomized_election_timeout_ticks
            self.become_follower(message.term, None)
            self.election_elapsed_ticks = elapsed_ticks
            self.randomized_election_timeout_ticks = timeout_ticks
        else:
            self.become_follower(message.term, None)
        return True

    def syncs_before_sending(self) -> bool:
        """Whether a Ready with new entries or a new term/vote asks the driver to make them
        durable before it sends the Ready's messages. Always true here; the simulation's
        deliberately broken cores override it to prove the checker notices."""
        return True

    def _step_stale(self, message: Message) -> None:
        if isinstance(message, AppendEntries | Heartbeat):
            if self.config.check_quorum or self.config.pre_vote:
                # The sender believes it leads an old term; our answer makes it step down.
                self.send(AppendResponse(self.term, self.id, message.sender, 0))
        elif isinstance(message, VoteRequest) and message.pre_vote:
            self.send(VoteResponse(self.term, self.id, message.sender, False, True))

    def _dispatch(self, message: Message) -> None:
        match message:
            case VoteRequest():
                self.handle_vote_request(message)
            case VoteResponse():
                self.handle_vote_response(message)
            case AppendEntries() | Heartbeat() | InstallSnapshot():
                if self.role is Role.LEADER:
                    return  # two leaders in one term cannot happen; never obey another
                if self.role is not Role.FOLLOWER:
                    self.become_follower(message.term, message.sender)
                self.election_elapsed_ticks = 0
                self.leader_id = message.sender
                if isinstance(message, AppendEntries):
                    self.handle_append_entries(message)
                elif isinstance(message, Heartbeat):
                    self.handle_heartbeat(message)
                else:
                    self.handle_install_snapshot(message)
            case AppendResponse():
                if self.role is Role.LEADER:
                    self.handle_append_response(message)
            case HeartbeatResponse():
                if self.role is Role.LEADER:
                    self.handle_heartbeat_response(message)
            case TimeoutNow():
                if self.role is not Role.LEADER:
                    self.campaign(CampaignKind.TRANSFER)
            case ReadIndexRequest():
                if self.role is Role.LEADER:
                    self.handle_read_request(message.sender, message.context)
            case ReadIndexResponse():
                if self.role is not Role.LEADER:
                    self.read_states.append(ReadState(message.index, message.context))
