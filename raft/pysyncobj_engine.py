"""``PysyncobjQuorum``: the Quorum interface on pysyncobj (the first engine).

Facts this module is built around (read in pysyncobj 0.3.17 and measured on this machine;
docs/raft.md, "Why"):

- pysyncobj runs each instance on its own tick thread and calls our callbacks there; results
  cross to trio through ``TrioToken.run_sync_soon``. The tick thread stops when the thread
  that constructed the object exits, so construct this class on a long-lived thread (the
  node's main thread, before or inside ``trio.run``), never in ``trio.to_thread``.
- pysyncobj pickles the replicated state into its full dump (log compaction: the file that a
  restart reloads before replaying the journal's tail) and sends that dump to a follower that
  lags behind the leader's compacted journal. Only attributes created after
  ``SyncObjConsumer.__init__`` are part of it: the lock and the pending snapshot live before.
  The replicated state is only builtins: the committed records (bytes) after the installed
  metadata snapshot, that snapshot (index, term, bytes) and a counter, so every dump is
  self-consistent. It is mutated only on the tick thread, where the dump is also pickled.
- pysyncobj unpickles what arrives on its port. A password (Fernet: HMAC checked before
  unpickling) is mandatory, even for one voter on loopback (every local user reaches that
  port), and the port binds only ``bind_host``.
- pysyncobj never fsyncs: it survives a killed process, not a power loss (docs/guarantees.md).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio
from pysyncobj import FAIL_REASON, SyncObj, SyncObjConf, SyncObjConsumer, replicated

from rillet.raft.errors import (
    MissingSecret,
    NotLeaderError,
    ProposalOutcomeUnknown,
    QuorumClosed,
    RaftError,
    SnapshotRequired,
)
from rillet.raft.quorum import Entry, Leadership, Quorum, Snapshot


@dataclass(frozen=True, slots=True)
class PysyncobjSettings:
    election_timeout_min_s: float = 0.3
    election_timeout_max_s: float = 0.6
    heartbeat_s: float = 0.05
    commit_timeout_s: float = 5.0
    leadership_poll_s: float = 0.05
    # pysyncobj retries a lost peer connection only every connectionRetryTime (default 5 s),
    # and a follower starts no election while connected to no one: after a restart, a
    # leader death within those 5 s stalled elections for seconds. Loopback reconnects are
    # cheap; retry often.
    connection_retry_s: float = 0.1
    tick_s: float = 0.02  # pysyncobj checks its timers once per tick (default 0.05 s)


_SnapshotTuple = tuple[int, int, bytes]  # (index, term, data); index 0 means "none"
_NO_SNAPSHOT: _SnapshotTuple = (0, 0, b"")


class _LogState(SyncObjConsumer):  # type: ignore[misc]
    """The replicated state: the latest installed snapshot and the records committed after it.

    pysyncobj pickles the attributes created after ``SyncObjConsumer.__init__`` into every
    full dump it writes (log compaction, reloaded on restart) and sends (to a follower that
    lags behind the leader's compacted journal). They are plain builtins, and the snapshot
    lives next to the entries it replaces, so every dump is self-consistent: ``_snapshot``
    covers indexes ``1.._snapshot[0]`` and ``_entries`` holds ``_snapshot[0]+1.._applied``.

    Every mutation of the replicated attributes happens on pysyncobj's tick thread (the
    ``@replicated`` body, ``install_pending`` from an on-tick callback, ``_deserialize``), which
    is also where the dumps are pickled (``useFork=False``). Readers on the trio thread take
    ``_guard``; so do the writers, to keep each reader's view consistent.
    """

    def __init__(self) -> None:
        # Created before SyncObjConsumer.__init__: not replicated, never pickled.
        self._guard = threading.Lock()
        self._pending: _SnapshotTuple | None = None  # saved, not yet installed (any thread)
        super().__init__()
        # Replicated state (pickled into pysyncobj's dumps): builtins only.
        self._entries: list[tuple[int, int, bytes]] = []
        self._applied = 0
        self._snapshot: _SnapshotTuple = _NO_SNAPSHOT

    @replicated  # type: ignore[untyped-decorator]
    def _append(self, data: bytes) -> int:  # on the tick thread
        term = int(self._syncObj._getTerm())
        with self._guard:
            self._applied += 1
            self._entries.append((self._applied, term, bytes(data)))
            return self._applied

    def _deserialize(self, data: dict[str, Any]) -> None:  # on the tick thread
        # A dump replaces the whole state at once: readers must not see half of it.
        with self._guard:
            super()._deserialize(data)

    def read(self, after_index: int, max_entries: int) -> list[Entry]:
        with self._guard:
            trimmed_through = self._snapshot[0]
            if after_index < trimmed_through:
                raise SnapshotRequired(trimmed_through)
            start = after_index - trimmed_through
            chunk = self._entries[start : start + max_entries]
        return [Entry(i, t, d) for i, t, d in chunk]

    def applied(self) -> int:
        with self._guard:
            return self._applied

    def save(self, snapshot: _SnapshotTuple) -> None:
        """Record a snapshot to install on the tick thread (any thread)."""
        with self._guard:
            if self._pending is None or snapshot[0] > self._pending[0]:
                self._pending = snapshot

    def install_pending(self) -> bool:
        """Install the pending snapshot once everything it covers is applied (tick thread).

        Returns whether a snapshot was installed (and entries trimmed).
        """
        with self._guard:
            pending = self._pending
            if pending is None or pending[0] > self._applied:
                return False  # never trim entries that are not applied yet
            self._pending = None
            current = self._snapshot[0]
            if pending[0] <= current:
                return False  # older than what is installed (e.g. a dump arrived meanwhile)
            del self._entries[: pending[0] - current]
            self._snapshot = pending
            return True

    def latest(self) -> _SnapshotTuple | None:
        with self._guard:
            snapshot = self._snapshot
            pending = self._pending
            # A pending snapshot covering only applied entries is about to be installed; a
            # reader that restores it reads on after its index, which is still kept.
            if pending is not None and snapshot[0] < pending[0] <= self._applied:
                snapshot = pending
        return None if snapshot[0] == 0 else snapshot


class PysyncobjQuorum(Quorum):
    """One voter. Construct on a long-lived thread; call the async methods from trio."""

    def __init__(
        self,
        node_id: int,
        voters: dict[int, str],
        data_dir: Path,
        secret: str,
        trio_token: trio.lowlevel.TrioToken,
        bind_host: str = "127.0.0.1",
        settings: PysyncobjSettings | None = None,
    ) -> None:
        if node_id not in voters:
            raise RaftError(f"node {node_id} is not among the voters {sorted(voters)}")
        if not secret:
            # Without a password pysyncobj unpickles whatever reaches its port, which runs
            # the sender's code: on loopback, any local user's.
            raise MissingSecret("pysyncobj needs a cluster secret: it unpickles what it reads")
        self.node_id = node_id
        self._voters = dict(voters)
        self._by_address = {addr: nid for nid, addr in voters.items()}
        self._settings = settings or PysyncobjSettings()
        self._token = trio_token
        self._changed = trio.Event()
        self._closed = False
        self._seen_applied = 0  # touched only on the tick thread
        data_dir.mkdir(parents=True, exist_ok=True)
        s = self._settings
        conf = SyncObjConf(
            password=secret,
            bindAddress=f"{bind_host}:{voters[node_id].rsplit(':', 1)[1]}",
            appendEntriesUseBatch=False,
            connectionTimeout=60,
            connectionRetryTime=s.connection_retry_s,
            autoTickPeriod=s.tick_s,
            raftMinTimeout=s.election_timeout_min_s,
            raftMaxTimeout=s.election_timeout_max_s,
            appendEntriesPeriod=s.heartbeat_s,
            leaderFallbackTimeout=s.election_timeout_min_s,
            useFork=False,
            dynamicMembershipChange=False,
            journalFile=str(data_dir / "raft.journal"),
            fullDumpFile=str(data_dir / "raft.snapshot"),
            onStateChanged=lambda old, new: self._notify_threadsafe(),
        )
        others = [addr for nid, addr in voters.items() if nid != node_id]
        # The state is a consumer: all its attributes exist before the tick thread starts
        # (it may load a dump or replay the journal right away).
        self._state = _LogState()
        self._log = SyncObj(voters[node_id], others, conf, consumers=[self._state])
        self._log.addOnTickCallback(self._on_tick)

    # -- thread bridge --------------------------------------------------------------------

    def _on_tick(self) -> None:
        """Once per pysyncobj tick, on its tick thread (after it applied and compacted)."""
        if self._state.install_pending():
            # Write a dump holding the new snapshot soon (next tick), so that it survives a
            # restart and lagging followers get it. Skipped by pysyncobj when nothing was
            # applied since its last dump: that dump stays consistent, with an older snapshot.
            self._log.forceLogCompaction()
        applied = self._state.applied()
        if applied != self._seen_applied:  # new records, or a dump was loaded
            self._seen_applied = applied
            self._notify_threadsafe()

    def _notify_threadsafe(self) -> None:
        try:
            self._token.run_sync_soon(self._notify)
        except trio.RunFinishedError:
            pass

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    # -- Quorum ---------------------------------------------------------------------------

    @property
    def voters(self) -> frozenset[int]:
        return frozenset(self._voters)

    def leadership(self) -> Leadership:
        leader = self._log._getLeader()
        leader_id = self._by_address.get(str(leader.address)) if leader is not None else None
        return Leadership(leader_id, int(self._log._getTerm()))

    async def propose(self, data: bytes) -> int:
        if self._closed:
            raise QuorumClosed("quorum member is closed")
        if not self._log._isLeader():
            lead = self.leadership()
            raise NotLeaderError(lead.leader_id, lead.term)
        done = trio.Event()
        outcome: list[Any] = []

        def callback(result: Any, error: int) -> None:  # on the tick thread
            def deliver() -> None:
                outcome.append((result, error))
                done.set()

            try:
                self._token.run_sync_soon(deliver)
            except trio.RunFinishedError:
                pass

        self._state._append(bytes(data), callback=callback)
        with trio.move_on_after(self._settings.commit_timeout_s):
            await done.wait()
        if not outcome:
            raise ProposalOutcomeUnknown("no commit within the commit timeout")
        result, error = outcome[0]
        if error == FAIL_REASON.SUCCESS:
            return int(result)
        if error in (FAIL_REASON.MISSING_LEADER, FAIL_REASON.NOT_LEADER):
            lead = self.leadership()
            raise NotLeaderError(lead.leader_id, lead.term)
        if error == FAIL_REASON.QUEUE_FULL:
            raise RaftError("proposal queue full")
        raise ProposalOutcomeUnknown(f"pysyncobj failure reason {error}")

    def commit_index(self) -> int:
        return self._state.applied()

    async def read_committed(self, after_index: int, max_entries: int = 1000) -> list[Entry]:
        while True:
            changed = self._changed
            entries = self._state.read(after_index, max_entries)
            if entries:
                return entries
            if self._closed:
                raise QuorumClosed("quorum member is closed")
            await changed.wait()

    async def wait_for_leadership_change(self, known: Leadership) -> Leadership:
        # pysyncobj reports its own state changes but not a new leader elsewhere: poll too.
        while (current := self.leadership()) == known:
            with trio.move_on_after(self._settings.leadership_poll_s):
                await self._changed.wait()
        return current

    def save_snapshot(self, snapshot: Snapshot) -> None:
        """Hand the snapshot to the tick thread, which installs it with the log it replaces.

        It is installed (and the entries it covers trimmed) once every entry up to its index
        is applied here, then written into pysyncobj's next full dump.
        """
        self._state.save((int(snapshot.index), int(snapshot.term), bytes(snapshot.data)))

    def latest_snapshot(self) -> Snapshot | None:
        latest = self._state.latest()
        return None if latest is None else Snapshot(*latest)

    def close(self) -> None:
        """Stop the tick thread and close pysyncobj's sockets."""
        if not self._closed:
            self._closed = True
            self._log.removeOnTickCallback(self._on_tick)
            self._log.destroy()
            self._notify_threadsafe()
