"""Exception root of the raft package."""

from __future__ import annotations


class RaftError(Exception):
    """Root of every error raised by ``rillet.raft``."""


class MissingSecret(RaftError):
    """A key was asked for without a cluster secret: a key derived from the empty string is
    one anybody can compute, so it would authenticate nobody."""


class NotLeaderError(RaftError):
    """This member does not lead; ``leader_id`` is the leader it knows of, if any."""

    def __init__(self, leader_id: int | None, term: int) -> None:
        hint = f"node {leader_id}" if leader_id is not None else "unknown"
        super().__init__(f"not the leader (term {term}, leader {hint})")
        self.leader_id = leader_id
        self.term = term


class ProposalOutcomeUnknown(RaftError):
    """Leadership changed before the proposal was known committed.

    The entry may or may not be in the log: like a timed-out write anywhere, the caller must
    retry with an idempotent record or read the log to find out.
    """


class SnapshotRequired(RaftError):
    """The entries asked for were compacted; restore from the latest snapshot first."""

    def __init__(self, snapshot_index: int) -> None:
        super().__init__(f"entries up to {snapshot_index} are only in the snapshot")
        self.snapshot_index = snapshot_index


class QuorumClosed(RaftError):
    """The quorum member was shut down."""


class MembershipUnsupported(RaftError):
    """The engine cannot change its voter set (pysyncobj, as rillet runs it)."""
