"""Errors of our own Raft engine's pure core, its log view and its message codec.

They subclass ``RaftError`` so that callers above raft/ can keep catching one root, and they
are distinct types so that a driver can tell "retry elsewhere" (NotLeaderError, from
``rillet.raft.errors``) from "this input is garbage" (MalformedMessage) from "the caller broke
the core's contract" (CoreContractError).
"""

from __future__ import annotations

from rillet.raft.errors import RaftError


class MalformedMessage(RaftError):
    """Bytes that are not a valid encoded Raft message; the peer (or the network) is at fault.

    The only exception the codec raises on bad input, whatever the bytes are, so a transport
    can drop the frame and go on.
    """


class ProposalDropped(RaftError):
    """The leader refused a proposal for a transient reason (a leadership transfer is under
    way); the caller may retry shortly, on this node or on the new leader."""


class LogCompacted(RaftError):
    """The entries asked for were compacted into a snapshot."""

    def __init__(self, index: int, first_index: int) -> None:
        super().__init__(f"index {index} is compacted; the log starts at {first_index}")
        self.index = index
        self.first_index = first_index


class EntryUnavailable(RaftError):
    """The entries asked for lie beyond the end of the log."""

    def __init__(self, index: int, last_index: int) -> None:
        super().__init__(f"index {index} is past the end of the log ({last_index})")
        self.index = index
        self.last_index = last_index


class CoreContractError(RaftError):
    """The driver misused the core (an argument out of range, advance without ready, a
    snapshot of unapplied state). A bug in the caller, never a consequence of network input."""


class InvariantViolation(RaftError):
    """The core found its own state impossible (for example, asked to overwrite a committed
    entry). Raised instead of continuing, because continuing could lose committed data."""


class MembershipChangeRefused(RaftError):
    """The leader cannot start this voter change now or at all: another change is not yet
    committed, the leader has not committed an entry of its own term, a voter is still
    catching up, or the change itself is invalid (the voter is absent, already present, or
    the last one). The message says which; the transient ones succeed when retried."""
