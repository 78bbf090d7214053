"""The ``Quorum`` interface: everything above raft/ sees consensus only through this.

Records are opaque bytes (CBOR produced by the layer above), so no engine ever pickles an
object of ours. A member proposes records, reads the committed stream in order, knows who
leads in which term, and stores snapshots that let the log be compacted. Engines: pysyncobj,
our own Raft, and ``SimQuorum`` for deterministic tests of the layers above.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

import trio

from rillet.raft.errors import MembershipUnsupported

UNSUPPORTED = 'voter changes need quorum.engine = "raft" (pysyncobj\'s voter set is fixed)'


@dataclass(frozen=True, slots=True)
class Entry:
    """A committed record: its position in the log, the term that wrote it, its bytes."""

    index: int
    term: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Leadership:
    leader_id: int | None
    term: int


@dataclass(frozen=True, slots=True)
class VoterProgress:
    """What a leader knows of one voter: the last index its log shares with the leader's,
    and how long ago it last answered (0 for the leader itself)."""

    voter_id: int
    match_index: int
    quiet_ms: int


@dataclass(frozen=True, slots=True)
class ReplicaProgress:
    """What the leader knows of one replica, voter or observer: how far its log matches
    the leader's (-1: not known here) and how long ago it last answered."""

    node_id: int
    directory_id: str
    voter: bool
    match_index: int
    quiet_ms: int


@dataclass(frozen=True, slots=True)
class Snapshot:
    """State-machine bytes covering every entry up to and including ``index``. ``voters``
    is our Raft engine's voter configuration at ``index`` (encoded; empty elsewhere): the
    configuration entries the snapshot replaces must not be lost with them."""

    index: int
    term: int
    data: bytes
    voters: bytes = b""


class Quorum(abc.ABC):
    """One member's handle on the replicated log. Indexes start at 1; 0 means "none"."""

    node_id: int

    @property
    @abc.abstractmethod
    def voters(self) -> frozenset[int]:
        """The voter set in effect (our engine's can change; see docs/raft.md)."""

    @abc.abstractmethod
    def leadership(self) -> Leadership:
        """Who leads, as this member currently believes."""

    def is_leader(self) -> bool:
        return self.leadership().leader_id == self.node_id

    @property
    def directory_id(self) -> str:
        """This replica's data directory id (KIP-853); "" on engines without one."""
        return ""

    async def add_voter(
        self, node_id: int, directory_id: str, raft_address: str, listener_address: str = ""
    ) -> None:
        """Catch the replica at ``raft_address`` up and make it a voter (one server at a
        time); returns once the configuration entry is committed. Leader only."""
        raise MembershipUnsupported(UNSUPPORTED)

    def voter_listeners(self) -> dict[int, str]:
        """The client listeners ("host:port") the configuration in effect records for
        voters added at run time (configured voters are in the node's config)."""
        return {}

    def observe(self, node_id: int, raft_address: str) -> None:
        """On the leader: send the log to the replica at ``raft_address`` without counting
        it (an observer, which may later be added as a voter)."""
        raise MembershipUnsupported(UNSUPPORTED)

    async def remove_voter(self, node_id: int, directory_id: str = "") -> None:
        """Remove a voter; returns once the configuration entry is committed."""
        raise MembershipUnsupported(UNSUPPORTED)

    def replica_progress(self) -> list[ReplicaProgress]:
        """Voters and observers with what the leader knows of them (DescribeQuorum)."""
        return [
            ReplicaProgress(p.voter_id, "", True, p.match_index, p.quiet_ms)
            for p in self.voter_progress()
        ]

    def voter_progress(self) -> list[VoterProgress]:
        """On the leader, each voter's replication progress (DescribeQuorum shows it); empty
        on a follower, and on an engine that does not expose it (pysyncobj)."""
        return []

    @abc.abstractmethod
    async def propose(self, data: bytes) -> int:
        """Append ``data`` and return its index once committed.

        Raises NotLeaderError (with a hint) when this member does not lead, and
        ProposalOutcomeUnknown when leadership changed while the proposal was pending.
        """

    @abc.abstractmethod
    async def read_committed(self, after_index: int, max_entries: int = 1000) -> list[Entry]:
        """Committed entries with index > ``after_index``, waiting until there is one.

        Raises SnapshotRequired when ``after_index`` precedes the compacted prefix.
        """

    @abc.abstractmethod
    def commit_index(self) -> int:
        """The highest index this member knows to be committed."""

    @abc.abstractmethod
    async def wait_for_leadership_change(self, known: Leadership) -> Leadership:
        """Return once leadership differs from ``known``."""

    @abc.abstractmethod
    def save_snapshot(self, snapshot: Snapshot) -> None:
        """Store a state-machine snapshot; entries up to its index may then be compacted."""

    @abc.abstractmethod
    def latest_snapshot(self) -> Snapshot | None:
        """The newest stored snapshot, for a member whose reader fell behind compaction."""

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Engines with trio tasks run them here (the node starts this first and cancels it
        on stop); engines with their own threads have nothing to run."""
        task_status.started()

    def allow_new_message_forms(self, allowed: bool) -> None:  # noqa: B027 - optional hook
        """Whether every member reads this release's message forms (the cluster's feature
        level says so): until then an engine that has older forms writes those, so members
        of the previous release still understand it. Engines with one form ignore this."""

    def close(self) -> None:  # noqa: B027 - optional hook, engines without resources skip it
        """Stop the member and release its threads, sockets and files."""
