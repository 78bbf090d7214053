"""Log replication: the leader's appends, heartbeats and snapshots, the follower's answers,
the commit rule, and the heartbeat rounds that confirm ReadIndex requests.

Safety arguments that live here:

* A leader commits an index only when a quorum holds it *and* its entry is of the leader's
  current term (Raft paper, Figure 8): replicas of an older term's entry can still be
  overwritten by a leader that never saw them.
* The leader counts itself only up to ``persisted_index``: an entry that is merely in memory
  would be lost if this node crashed, so it must not help form a quorum.
* A follower acknowledges only what the leader's message proved to match, and the Ready
  contract delays that acknowledgement until the entries are durable.
* A follower never commits past what the leader knows it holds: heartbeats carry
  min(match, commit) and appends are capped at the last entry they carried.
"""

from __future__ import annotations

from rillet.raft.core_state import CoreState
from rillet.raft.messages import (
    AppendEntries,
    AppendResponse,
    Heartbeat,
    HeartbeatResponse,
    InstallSnapshot,
    ReadIndexResponse,
    TimeoutNow,
)
from rillet.raft.progress import ProgressState
from rillet.raft.read_index import PendingRead, ReadState
from rillet.raft.ready import Role


class Replication(CoreState):
    # -- leader: sending ----------------------------------------------------------------

    def send_append(self, to: int, send_if_empty: bool = True) -> bool:
        """Send the next batch to ``to`` if its progress allows; a snapshot instead when the
        entries it needs were compacted. Returns whether a message was sent."""
        progress = self.tracker.progress[to]
        if progress.is_paused():
            return False
        prev_index = progress.next_index - 1
        prev_term = self.log.term(prev_index)
        entries = self.log.entries_from(
            progress.next_index, self.config.max_append_entries, self.config.max_append_bytes
        )
        if prev_term is None or entries is None:
            return self.send_snapshot(to)
        if not entries and not send_if_empty:
            return False
        self.send(
            AppendEntries(
                self.term, self.id, to, prev_index, prev_term, tuple(entries), self.log.committed
            )
        )
        if entries:
            progress.sent_entries(entries[-1].index, sum(e.size_bytes() for e in entries))
        return True

    def send_snapshot(self, to: int) -> bool:
        progress = self.tracker.progress[to]
        if not progress.recent_active:
            # Snapshots are large: wait until the follower is known to be reachable.
            return False
        snapshot = self.log.snapshot()
        if snapshot.index == 0:
            return False
        self.send(InstallSnapshot(self.term, self.id, to, snapshot))
        progress.become_snapshot(snapshot.index)
        return True

    def send_heartbeat(self, to: int, read_id: int = 0) -> None:
        match_index = self.tracker.progress[to].match_index
        commit = min(match_index, self.log.committed)
        self.send(Heartbeat(self.term, self.id, to, commit, read_id))

    def broadcast_heartbeat(self, read_id: int = 0) -> None:
        for peer in self.replicas():
            self.send_heartbeat(peer, read_id)

    def broadcast_append(self) -> None:
        """Send every follower what it lacks, filling each pipeline window; followers that
        lack nothing get an empty append carrying the new commit index."""
        for peer in self.replicas():
            if self.send_append(peer):
                while self.send_append(peer, send_if_empty=False):
                    pass

    def flush_broadcast(self) -> None:
        if self.broadcast_pending and self.role is Role.LEADER:
            self.broadcast_append()
        self.broadcast_pending = False

    # -- leader: commit -----------------------------------------------------------------

    def maybe_commit(self) -> bool:
        index = self.tracker.committed_index()
        if index <= self.log.committed:
            return False
        if not self.may_commit_by_count(index):
            return False
        self.log.commit_to(index)
        self.on_commit_advanced()
        return True

    def may_commit_by_count(self, index: int) -> bool:
        """A leader commits by counting replicas only entries of its own term (earlier
        terms' entries are committed with them): the Raft paper's Figure 8 rule."""
        return self.log.term(index) == self.term

    def on_commit_advanced(self) -> None:
        self.broadcast_pending = True
        if self.reads_awaiting_commit and self.committed_in_current_term():
            waiting, self.reads_awaiting_commit = self.reads_awaiting_commit, []
            for requester, context in waiting:
                self.handle_read_request(requester, context)

    def self_persisted(self) -> None:
        """The driver made our log durable up to ``persisted_index``: count ourselves."""
        if self.role is Role.LEADER:
            own = self.tracker.progress[self.id]
            if own.maybe_update(self.log.persisted_index()):
                self.maybe_commit()

    # -- leader: answers ----------------------------------------------------------------

    def handle_append_response(self, message: AppendResponse) -> None:
        progress = self.tracker.progress.get(message.sender)
        if progress is None:
            return  # a replica we no longer send to (removed, or a catch-up abandoned)
        progress.heard()
        if message.reject:
            next_probe = message.reject_hint
            if message.hint_term > 0:
                next_probe, _ = self.log.find_conflict_by_term(
                    message.reject_hint, message.hint_term
                )
            if progress.maybe_decrease_to(message.index, next_probe):
                if progress.state is ProgressState.REPLICATE:
                    progress.become_probe()
                self.send_append(message.sender)
            return
        if not progress.maybe_update(message.index):
            return
        if progress.state is ProgressState.PROBE:
            progress.become_replicate()
        elif progress.state is ProgressState.SNAPSHOT:
            caught_up = progress.match_index >= progress.pending_snapshot_index
            if caught_up or progress.match_index + 1 >= self.log.first_index():
                progress.become_probe()
                progress.become_replicate()
        else:
            progress.inflights.free_le(message.index)
        self.maybe_commit()
        while self.send_append(message.sender, send_if_empty=False):
            pass
        if message.sender == self.transfer_target and progress.match_index == self.log.last_index():
            self.send(TimeoutNow(self.term, self.id, message.sender))

    def handle_heartbeat_response(self, message: HeartbeatResponse) -> None:
        progress = self.tracker.progress.get(message.sender)
        if progress is None:
            return
        progress.heard()
        progress.probe_sent = False
        if progress.state is ProgressState.REPLICATE and progress.inflights.full():
            # An ack may have been lost; let one more append through to find out.
            progress.inflights.free_first_one()
        if progress.match_index < self.log.last_index():
            self.send_append(message.sender)
        if message.read_id and self.tracker.is_quorum(
            self.reads.acknowledge(message.read_id, message.sender)
        ):
            for read in self.reads.release_through(message.read_id):
                self.answer_read(read)

    def tick_snapshot_timeouts(self) -> None:
        timeout_ticks = self.config.effective_snapshot_timeout_ticks()
        for voter, progress in self.tracker.progress.items():
            if voter != self.id and progress.state is ProgressState.SNAPSHOT:
                progress.snapshot_elapsed_ticks += 1
                if progress.snapshot_elapsed_ticks >= timeout_ticks:
                    progress.become_probe()

    # -- leader: ReadIndex --------------------------------------------------------------

    def handle_read_request(self, requester: int, context: bytes) -> None:
        if not self.committed_in_current_term():
            # Our commit index may still lag the previous leader's; wait for our no-op.
            self.reads_awaiting_commit.append((requester, context))
            return
        if self.voters == {self.id}:
            self.answer_read(PendingRead(0, self.log.committed, requester, context))
            return
        read = self.reads.add(self.log.committed, requester, context, self.id)
        self.broadcast_heartbeat(read.read_id)

    def answer_read(self, read: PendingRead) -> None:
        if read.requester == self.id:
            self.read_states.append(ReadState(read.index, read.context))
        else:
            self.send(
                ReadIndexResponse(self.term, self.id, read.requester, read.index, read.context)
            )

    # -- follower -----------------------------------------------------------------------

    def handle_append_entries(self, message: AppendEntries) -> None:
        if message.prev_index < self.log.committed:
            # Everything up to our commit index matches any leader's log; say so.
            self.send(AppendResponse(self.term, self.id, message.sender, self.log.committed))
            return
        last_new_index = self.log.maybe_append(
            message.prev_index, message.prev_term, message.commit, message.entries
        )
        if last_new_index is not None:
            self.send(AppendResponse(self.term, self.id, message.sender, last_new_index))
            return
        probe_index = min(message.prev_index, self.log.last_index())
        hint_index, hint_term = self.log.find_conflict_by_term(probe_index, message.prev_term)
        self.send(
            AppendResponse(
                self.term,
                self.id,
                message.sender,
                message.prev_index,
                reject=True,
                reject_hint=hint_index,
                hint_term=hint_term,
            )
        )

    def handle_heartbeat(self, message: Heartbeat) -> None:
        self.log.commit_to(min(message.commit, self.log.last_index()))
        self.send(HeartbeatResponse(self.term, self.id, message.sender, message.read_id))

    def handle_install_snapshot(self, message: InstallSnapshot) -> None:
        snapshot = message.snapshot
        if snapshot.index <= self.log.committed:
            pass  # we already have all of it
        elif self.log.match_term(snapshot.index, snapshot.term):
            # Our log already holds the snapshot's last entry: just fast-forward the commit.
            self.log.commit_to(snapshot.index)
        else:
            self.log.restore(snapshot)
            self.send(AppendResponse(self.term, self.id, message.sender, self.log.last_index()))
            return
        self.send(AppendResponse(self.term, self.id, message.sender, self.log.committed))
