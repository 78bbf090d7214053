"""Our own Raft engine behind the ``Quorum`` interface: the trio driver of the pure core.

Tasks around :class:`~rillet.raft.core.RaftCore`: a ticker (one logical tick every
``tick_ms``), a peer watcher (peers whose port refused a connection, reported to the core as
down, so that the followers of a dead leader campaign within a few ticks) and the Ready
loop, which runs the core's contract in order — persist (snapshot, entries, hard state) →
fdatasync when asked → send → apply → advance — so no message ever promises something that
is not on disk (a vote, an append acknowledgement). Many proposals that arrive between two
Readys share one fdatasync (group commit). Authenticated messages from
:class:`RaftTransport` are stepped into the core by the connection task that read them,
which also carries out the Ready they make when no other is under way (the core hands out
one at a time), in the same order. Every fdatasync runs in a worker thread (awaited by that
connection task, or by the Ready loop for the Readys it carries out), so a slow disk delays
commits but never stops the node's event loop (a broker's produce, fetch and replication
share it).

Committed entries are kept in memory after the latest snapshot for ``read_committed``
(``committed_entries.py``; this driver only waits for them); the leader's no-op entries take
an index but are never handed to readers. A proposal resolves
when its entry commits with the term it was proposed in, fails as lost when another term's
entry commits at its index, and is reported ``ProposalOutcomeUnknown`` when leadership
changes before either.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from rillet.raft.committed_entries import CommittedEntries
from rillet.raft.core import RaftCore
from rillet.raft.core_config import Config
from rillet.raft.core_errors import CoreContractError
from rillet.raft.durable_log import DurableLog
from rillet.raft.errors import NotLeaderError, ProposalOutcomeUnknown, RaftError
from rillet.raft.leadership_report import leadership_to_report
from rillet.raft.message_codec import decode_message, encode_message
from rillet.raft.messages import AppendEntries, EntryKind, Heartbeat, Message
from rillet.raft.quorum import Entry, Leadership, Quorum, ReplicaProgress, Snapshot, VoterProgress
from rillet.raft.quorum_membership import QuorumMembership, parse_raft_address
from rillet.raft.ready import Ready, Role, SoftState
from rillet.raft.transport import (
    InboundLimits,
    PeerAddress,
    PeerTls,
    RaftTransport,
    TransportError,
)

log = logging.getLogger(__name__)


def _leader_replication(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """The messages a leader may send before its own entries are durable."""
    return tuple(m for m in messages if isinstance(m, (AppendEntries, Heartbeat)))


@dataclass(frozen=True, slots=True)
class RaftSettings:
    tick_ms: int = 50
    election_timeout_ticks: int = 8  # 400-800 ms: the core randomises within [T, 2T)
    heartbeat_interval_ticks: int = 1
    commit_timeout_s: float = 5.0
    # A replica being added as a voter must catch up within this; the request waits for it.
    catch_up_timeout_ms: int = 30_000
    max_append_entries: int = 256  # entries in one AppendEntries message (up to 1 MiB)
    inbound: InboundLimits = field(default_factory=InboundLimits)  # what the Raft port accepts


@dataclass(frozen=True, slots=True)
class _Begun:
    """A persisted Ready: the messages already sent, and whether it still owes a sync."""

    sent: tuple[Message, ...]
    must_sync: bool


_NO_SYNC = _Begun((), must_sync=False)


@dataclass(slots=True)
class _Proposal:
    term: int
    done: trio.Event
    index: int = 0
    error: RaftError | None = None


class RaftQuorum(Quorum):
    """One replica of our own engine. Start :meth:`run` in a nursery before using it.

    ``voters``: the configured voters and their Raft addresses (the bootstrap configuration,
    until the log holds one of its own). A node not among them starts as an observer,
    listening on ``listen``, and votes once a configuration entry makes it a voter."""

    def __init__(
        self,
        node_id: int,
        voters: dict[int, PeerAddress],
        data_dir: Path,
        secret: str,
        settings: RaftSettings | None = None,
        rng: random.Random | None = None,
        tls: PeerTls | None = None,
        listen: PeerAddress | None = None,
    ) -> None:
        self.node_id = node_id
        self._settings = s = settings or RaftSettings()
        # Messages in release 0.1.0's form until the node says every member reads the new
        # one (allow_new_message_forms; message_codec.py).
        self._legacy_messages = True
        self._storage = DurableLog.open(data_dir)
        config = Config(
            election_timeout_ticks=s.election_timeout_ticks,
            heartbeat_interval_ticks=s.heartbeat_interval_ticks,
            catch_up_timeout_ticks=max(1, s.catch_up_timeout_ms // s.tick_ms),
            max_append_entries=s.max_append_entries,
        )
        self._core = RaftCore(
            node_id,
            set(voters),
            self._storage,
            config,
            rng or random.Random(),
            directory_id=self._storage.directory_id,
        )
        self._transport = RaftTransport(
            node_id, voters, secret, listen or voters[node_id], tls=tls, limits=s.inbound
        )
        self.membership = QuorumMembership(
            self._core,
            self._transport,
            voters,
            s.catch_up_timeout_ms / 1000 + s.commit_timeout_s,
            s.tick_ms,
        )
        self._committed = CommittedEntries(self._storage.snapshot())
        self._pending: dict[int, _Proposal] = {}
        self._leadership = Leadership(None, self._storage.hard_state().term)
        self._work = trio.Event()  # the core may have a Ready
        self._changed = trio.Event()  # new commits or a leadership change
        self._closed = False
        # A Ready a connection task began and the Ready task finishes (its sync, in a
        # thread), and an error from one it carried out (raised by the Ready task).
        self._handed: tuple[Ready, _Begun] | None = None
        self._failure: BaseException | None = None
        self.readies_in_connection_tasks = 0  # carried out where the message was read

    # -- tasks ---------------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        # Messages are stepped into the core by the connection task that read them (no
        # hand-over to a receiving task: a turn of the event loop less on each of the four
        # hops of a commit).
        self._transport.deliver_to(self._on_message)
        async with trio.open_nursery() as nursery:
            await nursery.start(self._transport.run)
            nursery.start_soon(self._ticker)
            nursery.start_soon(self._peer_watcher)
            nursery.start_soon(self._ready_loop)
            self.membership.sync()  # links to voters the log added (after a restart)
            task_status.started()

    async def _ticker(self) -> None:
        while True:
            await trio.sleep(self._settings.tick_ms / 1000)
            self._tick()

    def _tick(self) -> None:
        self._core.tick()
        self._report_leadership()  # check-quorum may have deposed this leader
        self._work.set()

    def _on_message(
        self, peer: int, payload: bytes, more: bool
    ) -> Coroutine[Any, Any, None] | None:
        """A message from ``peer``, stepped by the connection task that read it; the Ready
        it makes is carried out here too, unless more messages were read with it (they
        join it: one fdatasync for a burst). When that Ready must be synced, what is left
        of it is returned for the connection task to await before it reads on."""
        try:
            message = decode_message(payload)
        except Exception as exc:  # authenticated but unreadable: a bug, not an attack
            log.warning("dropping an unreadable raft message from %d: %s", peer, exc)
            return None
        self.membership.heard(peer)
        self._core.step(message)
        self._report_leadership()  # a newer term may have deposed this leader
        rest = None if more else self._handle_now()
        if self._core.has_ready():
            self._work.set()
        return rest

    async def _peer_watcher(self) -> None:
        """Refused connections are proof that a peer's process is gone (a SIGKILLed
        leader's port refuses at once); the core campaigns early if that peer led us."""
        while True:
            peer = await self._transport.peer_down()
            self._core.report_leader_down(peer)
            self._work.set()

    async def _ready_loop(self) -> None:
        while True:
            if self._failure is not None:
                raise self._failure  # a Ready handled by a connection task failed
            if self._handed is not None:  # begun by a connection task, to sync in a thread
                ready, begun = self._handed
                self._handed = None  # still outstanding in the core until advanced
                await self._complete(ready, begun)
                continue
            if not self._core.has_ready():
                await self._work.wait()
                self._work = trio.Event()
                continue
            await self._handle(self._core.ready())

    def _handle_now(self) -> Coroutine[Any, Any, None] | None:
        """Carry out the core's Ready in the task that stepped a message into it, when no
        other Ready is under way (the core hands out one at a time): the Ready task's
        wake-up was one turn of the event loop on each side of every commit. A Ready that
        must be synced (a follower's append) is persisted here and the rest returned: the
        connection task awaits the fdatasync in a worker thread, then acknowledges. An
        fdatasync in the event loop stopped every other task of the node for as long as the
        disk took (up to 1.3 s while the nodes created 10,000 partition logs)."""
        if not self._core.has_ready():  # also while a Ready is under way (handed or not)
            return None
        ready = self._core.ready()
        try:
            begun = self._begin(ready)
            if begun.must_sync:
                return self._sync_then_finish(ready, begun)
            self._finish(ready, ())
            self.readies_in_connection_tasks += 1
        except BaseException as exc:  # the Ready task raises it: the member stops as before
            self._failure = exc
            self._work.set()
        return None

    async def _sync_then_finish(self, ready: Ready, begun: _Begun) -> None:
        """The rest of a Ready begun in a connection task: its sync in a worker thread, then
        :meth:`_finish`. If the sync fails, or the task is cancelled (its connection
        closes), the Ready task takes the Ready over (it syncs again, or fails the member as
        before), so the core is never left with a Ready nobody finishes."""
        try:
            await trio.to_thread.run_sync(self._storage.sync)
        except BaseException:
            self._handed = (ready, begun)
            self._work.set()
            raise
        try:
            self._finish(ready, begun.sent)
            self.readies_in_connection_tasks += 1
        except BaseException as exc:
            self._failure = exc
        if self._failure is not None or self._core.has_ready():
            self._work.set()

    async def _handle(self, ready: Ready) -> None:
        await self._complete(ready, self._begin(ready))

    async def _complete(self, ready: Ready, begun: _Begun) -> None:
        """After :meth:`_begin`: the sync it owes, in a thread, then :meth:`_finish`."""
        if begun.must_sync:
            await trio.to_thread.run_sync(self._storage.sync)
        self._finish(ready, begun.sent)

    def _begin(self, ready: Ready) -> _Begun:
        """Persist ``ready`` and send what may leave before its sync (a leader's appends);
        the caller syncs, in a thread, before :meth:`_finish` when it must."""
        storage = self._storage
        if ready.snapshot is not None:
            storage.apply_snapshot(ready.snapshot)
            self._install(ready.snapshot)
        if ready.compaction is not None:
            storage.apply_snapshot(ready.compaction)
        hard_state_changes = ready.hard_state is not None and (
            (ready.hard_state.term, ready.hard_state.vote)
            != (storage.hard_state().term, storage.hard_state().vote)
        )
        if ready.entries:
            storage.append(ready.entries)
        if ready.hard_state is not None:
            storage.set_hard_state(ready.hard_state)
        if not ready.must_sync:
            return _NO_SYNC
        early = () if hard_state_changes else _leader_replication(ready.messages)
        # A leader's appends promise nothing about its own disk (the core counts the leader
        # toward commit only after advance), so they leave before its fdatasync, which runs
        # in a thread meanwhile: followers persist in parallel and a commit waits for one
        # fsync on the critical path, not two (Raft thesis §10.2.1).
        for message in early:
            self._send(message)
        return _Begun(early, must_sync=True)

    def _finish(self, ready: Ready, sent: tuple[Message, ...]) -> None:
        """Send the rest of ``ready``'s messages, apply, and advance the core."""
        for message in ready.messages:
            if message not in sent:
                self._send(message)
        for entry in ready.committed_entries:
            self._apply(entry.index, entry.term, entry.data, entry.kind)
        self._report_leadership(ready.soft_state)
        if self._pending and self._core.role is not Role.LEADER:
            for proposal in self._pending.values():  # they may still commit, or not
                proposal.error = ProposalOutcomeUnknown("leadership changed")
                proposal.done.set()
            self._pending.clear()
        self._core.advance(ready)
        self.membership.sync()
        self._notify()

    def _send(self, message: Message) -> None:
        try:
            self._transport.send(message.recipient, self._encode(message))
        except TransportError:  # a replica that just left (or whose address is not known)
            log.debug("no link to %d for %s", message.recipient, type(message).__name__)

    def allow_new_message_forms(self, allowed: bool) -> None:
        self._legacy_messages = not allowed

    def _encode(self, message: Message) -> bytes:
        return encode_message(message, legacy=self._legacy_messages)

    def _install(self, snapshot: Snapshot) -> None:
        """A snapshot from the leader replaces everything this member had applied."""
        self._committed.installed(snapshot)

    def _apply(self, index: int, term: int, data: bytes, kind: EntryKind) -> None:
        if kind is EntryKind.NORMAL:
            self._committed.applied(Entry(index, term, data))
        proposal = self._pending.pop(index, None)
        if proposal is not None:
            if proposal.term == term and kind is EntryKind.NORMAL:
                proposal.index = index
            else:
                proposal.error = NotLeaderError(self._leadership.leader_id, term)
            proposal.done.set()

    def _report_leadership(self, settled: SoftState | None = None) -> None:
        """Tell the layers above who leads (raft/leadership_report.py): a Ready's soft state
        once it is carried out (``settled``), a deposition of this leader at once."""
        core = self._core
        now = leadership_to_report(
            self.node_id, self._leadership, core.soft_state(), core.term, settled
        )
        if now is None:
            return
        self._leadership = now
        if settled is None:  # between Readys: nobody else wakes the waiters
            self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    # -- Quorum --------------------------------------------------------------------------------

    @property
    def voters(self) -> frozenset[int]:
        return frozenset(self._core.voters)

    def leadership(self) -> Leadership:
        return self._leadership

    def voter_progress(self) -> list[VoterProgress]:
        tick_ms = self._settings.tick_ms
        return [
            VoterProgress(v, match, quiet_ticks * tick_ms)
            for v, (match, quiet_ticks) in sorted(self._core.voter_progress().items())
        ]

    def replica_progress(self) -> list[ReplicaProgress]:
        return self.membership.replica_progress()

    @property
    def directory_id(self) -> str:
        return self._storage.directory_id

    async def add_voter(
        self, node_id: int, directory_id: str, raft_address: str, listener_address: str = ""
    ) -> None:
        raft = parse_raft_address(raft_address) if raft_address else None
        await self.membership.add_voter(node_id, directory_id, raft, listener_address)

    async def remove_voter(self, node_id: int, directory_id: str = "") -> None:
        await self.membership.remove_voter(node_id, directory_id)

    def voter_listeners(self) -> dict[int, str]:
        return {
            v.node_id: v.listener_address
            for v in self.membership.configuration().voters
            if v.listener_address
        }

    def observe(self, node_id: int, raft_address: str) -> None:
        self.membership.observe(node_id, parse_raft_address(raft_address))
        self._work.set()

    async def propose(self, data: bytes) -> int:
        if self._core.status().role is not Role.LEADER:
            raise NotLeaderError(self._leadership.leader_id, self._leadership.term)
        try:
            entry = self._core.propose(bytes(data))
        except (NotLeaderError, CoreContractError) as exc:
            raise NotLeaderError(self._leadership.leader_id, self._leadership.term) from exc
        except RaftError as exc:  # dropped (a leadership transfer is under way)
            raise NotLeaderError(self._leadership.leader_id, self._leadership.term) from exc
        proposal = _Proposal(entry.term, trio.Event())
        self._pending[entry.index] = proposal
        self._work.set()
        with trio.move_on_after(self._settings.commit_timeout_s):
            await proposal.done.wait()
        if not proposal.done.is_set():
            self._pending.pop(entry.index, None)
            raise ProposalOutcomeUnknown("not committed within the commit timeout")
        if proposal.error is not None:
            raise proposal.error
        return proposal.index

    async def read_committed(self, after_index: int, max_entries: int = 1000) -> list[Entry]:
        while True:
            changed = self._changed
            out = self._committed.after(after_index, max_entries)
            if out:
                return out
            await changed.wait()

    def commit_index(self) -> int:
        """The index of the last committed entry readers get (or the snapshot's).

        Never a leader's no-op: a state machine waiting to have applied "the commit index"
        (a new controller does) would wait for an entry ``read_committed`` never returns.
        """
        return self._committed.applied_index

    async def wait_for_leadership_change(self, known: Leadership) -> Leadership:
        while self._leadership == known:
            await self._changed.wait()
        return self._leadership

    def save_snapshot(self, snapshot: Snapshot) -> None:
        """Compact the log up to the snapshot (taken by the state machine from applied
        state); readers behind it restore from it."""
        try:
            self._core.compact(snapshot)
        except CoreContractError as exc:
            log.debug("snapshot at %d not taken: %s", snapshot.index, exc)
            return
        self._committed.compacted(snapshot)
        self._work.set()

    def latest_snapshot(self) -> Snapshot | None:
        return self._committed.snapshot

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._storage.close()
