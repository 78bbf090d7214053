"""``PysyncobjQuorum``: the Quorum interface on pysyncobj (the first engine).

Facts this module is built around (checked on this machine, shared/NOTES.md):

- pysyncobj runs each instance on its own tick thread and calls our callbacks there; results
  cross to trio through ``TrioToken.run_sync_soon``. The tick thread stops when the thread
  that constructed the object exits, so construct this class on a long-lived thread (the
  node's main thread, before or inside ``trio.run``), never in ``trio.to_thread``.
- Attributes created before ``SyncObj.__init__`` are not part of the replicated (pickled)
  state: the lock, the callbacks and the trio token live there. The replicated state is only
  the committed records (bytes) and counters.
- pysyncobj unpickles what arrives on its port. A password (Fernet: HMAC checked before
  unpickling) is mandatory for more than one voter, and the port binds only ``bind_host``.
- pysyncobj never fsyncs: it survives a killed process, not a power loss (docs/guarantees.md).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio
from pysyncobj import FAIL_REASON, SyncObj, SyncObjConf, replicated

from rillet.raft.errors import (
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


class _ReplicatedLog(SyncObj):  # type: ignore[misc]
    """The replicated state: committed records since the last trim, and their count."""

    def __init__(
        self,
        self_addr: str,
        others: list[str],
        conf: SyncObjConf,
        on_apply: Callable[[], None],
    ) -> None:
        # Created before SyncObj.__init__: not replicated, never pickled.
        self._guard = threading.Lock()
        self._on_apply = on_apply
        # Replicated state (pickled into pysyncobj's snapshots).
        self._entries: list[tuple[int, int, bytes]] = []
        self._applied = 0
        self._trimmed_through = 0
        super().__init__(self_addr, others, conf)

    @replicated  # type: ignore[untyped-decorator]
    def _append(self, data: bytes) -> int:
        with self._guard:
            self._applied += 1
            self._entries.append((self._applied, self._getTerm(), bytes(data)))
            index = self._applied
        self._on_apply()
        return index

    def read(self, after_index: int, max_entries: int) -> list[Entry]:
        with self._guard:
            if after_index < self._trimmed_through:
                raise SnapshotRequired(self._trimmed_through)
            start = after_index - self._trimmed_through
            chunk = self._entries[start : start + max_entries]
            return [Entry(i, t, d) for i, t, d in chunk]

    def applied(self) -> int:
        with self._guard:
            return self._applied

    def trim_through(self, index: int) -> None:
        with self._guard:
            drop = min(index, self._applied) - self._trimmed_through
            if drop > 0:
                del self._entries[:drop]
                self._trimmed_through += drop


class PysyncobjQuorum(Quorum):
    """One voter. Construct on a long-lived thread; call the async methods from trio."""

    def __init__(
        self,
        node_id: int,
        voters: dict[int, str],
        data_dir: Path,
        secret: str | None,
        trio_token: trio.lowlevel.TrioToken,
        bind_host: str = "127.0.0.1",
        settings: PysyncobjSettings | None = None,
    ) -> None:
        if node_id not in voters:
            raise RaftError(f"node {node_id} is not among the voters {sorted(voters)}")
        if len(voters) > 1 and not secret:
            raise RaftError("a multi-node quorum needs a cluster secret (pysyncobj unpickles)")
        self.node_id = node_id
        self._voters = dict(voters)
        self._by_address = {addr: nid for nid, addr in voters.items()}
        self._settings = settings or PysyncobjSettings()
        self._token = trio_token
        self._changed = trio.Event()
        self._snapshot: Snapshot | None = None
        self._closed = False
        data_dir.mkdir(parents=True, exist_ok=True)
        s = self._settings
        conf = SyncObjConf(
            password=secret or None,
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
        self._log = _ReplicatedLog(voters[node_id], others, conf, self._notify_threadsafe)

    # -- thread bridge --------------------------------------------------------------------

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

        self._log._append(bytes(data), callback=callback)
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
        return self._log.applied()

    async def read_committed(self, after_index: int, max_entries: int = 1000) -> list[Entry]:
        while True:
            changed = self._changed
            entries = self._log.read(after_index, max_entries)
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
        self._snapshot = snapshot
        self._log.trim_through(snapshot.index)

    def latest_snapshot(self) -> Snapshot | None:
        return self._snapshot

    def close(self) -> None:
        """Stop the tick thread and close pysyncobj's sockets."""
        if not self._closed:
            self._closed = True
            self._log.destroy()
            self._notify_threadsafe()
