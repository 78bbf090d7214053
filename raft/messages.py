"""The values the Raft core exchanges: log entries, the hard state, and peer messages.

Everything here is a frozen dataclass, so a message handed to the driver can be queued,
duplicated or replayed by a simulator without anyone mutating it underneath. Node ids are
positive ints; ``None`` means "no node" (no vote cast, no leader known). Snapshots reuse
``rillet.raft.quorum.Snapshot`` so the driver can hand them to the layer above unchanged.

The message set follows the Raft paper and etcd-raft: AppendEntries doubles as the commit
carrier, Heartbeat carries the read-confirmation round of ReadIndex, VoteRequest carries both
pre-votes and votes (a pre-vote asks "would you vote for me?" without anyone changing term),
and TimeoutNow tells a transfer target to start an election at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import cbor2

from rillet.raft.quorum import Snapshot

# Rough per-entry framing cost, so batching limits count headers of tiny entries too.
ENTRY_OVERHEAD_BYTES = 16


class EntryKind(IntEnum):
    """NORMAL entries carry application bytes; LEADER_NOOP is the empty entry a new leader
    appends so that it can commit something of its own term (and thereby every earlier
    entry, see the paper's Figure 8). Appliers skip no-ops."""

    NORMAL = 0
    LEADER_NOOP = 1
    # The voter set from this index on (``rillet.raft.membership``); appliers skip it.
    CONFIG = 2


@dataclass(frozen=True, slots=True)
class LogEntry:
    index: int
    term: int
    data: bytes = b""
    kind: EntryKind = EntryKind.NORMAL

    def size_bytes(self) -> int:
        return len(self.data) + ENTRY_OVERHEAD_BYTES


@dataclass(frozen=True, slots=True)
class HardState:
    """What must survive a crash: the current term, the vote cast in it, and the commit index
    (the commit index may lag after a crash; it is re-learned from the leader)."""

    term: int = 0
    vote: int | None = None
    commit: int = 0
    # The directory id of the candidate voted for ("" when unknown): a node wiped and
    # restarted under the same id is another identity and gets no second vote.
    vote_directory: str = ""


@dataclass(frozen=True, slots=True)
class AppendEntries:
    """Leader -> follower: entries after (prev_index, prev_term), plus the leader's commit."""

    term: int
    sender: int
    recipient: int
    prev_index: int
    prev_term: int
    entries: tuple[LogEntry, ...]
    commit: int


@dataclass(frozen=True, slots=True)
class AppendResponse:
    """Follower -> leader. On success ``index`` is the last index now known to match the
    leader. On rejection ``index`` echoes the rejected prev_index and (reject_hint, hint_term)
    is the follower's best guess of where the logs may agree: its last index at or below the
    probe whose term is <= the probe's term, so the leader can skip a whole term per round
    trip instead of one entry."""

    term: int
    sender: int
    recipient: int
    index: int
    reject: bool = False
    reject_hint: int = 0
    hint_term: int = 0


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Leader -> follower. ``commit`` is capped at what the follower is known to hold, so a
    follower never commits an entry it may not have. A non-zero ``read_id`` makes this round
    confirm the leadership for pending ReadIndex requests."""

    term: int
    sender: int
    recipient: int
    commit: int
    read_id: int = 0


@dataclass(frozen=True, slots=True)
class HeartbeatResponse:
    term: int
    sender: int
    recipient: int
    read_id: int = 0


@dataclass(frozen=True, slots=True)
class VoteRequest:
    """Candidate -> voter. ``pre_vote`` requests carry the term the candidate *would* use;
    ``transfer`` marks an election started by TimeoutNow, which voters must not ignore on the
    grounds that they heard from a leader recently. ``candidate_directory`` is the
    candidate's directory id, ``voter_directory`` the recipient's as the candidate's
    configuration names it (a recipient with another directory refuses: it is not that
    voter)."""

    term: int
    sender: int
    recipient: int
    last_index: int
    last_term: int
    pre_vote: bool = False
    transfer: bool = False
    candidate_directory: str = ""
    voter_directory: str = ""


@dataclass(frozen=True, slots=True)
class VoteResponse:
    term: int
    sender: int
    recipient: int
    granted: bool
    pre_vote: bool = False


@dataclass(frozen=True, slots=True)
class InstallSnapshot:
    """Leader -> follower whose next entry was compacted away: replace your log with this."""

    term: int
    sender: int
    recipient: int
    snapshot: Snapshot


@dataclass(frozen=True, slots=True)
class TimeoutNow:
    """Leader -> transfer target, once the target's log is up to date: campaign now."""

    term: int
    sender: int
    recipient: int


@dataclass(frozen=True, slots=True)
class ReadIndexRequest:
    """Follower -> leader: a linearizable read with the follower's opaque ``context``."""

    term: int
    sender: int
    recipient: int
    context: bytes


@dataclass(frozen=True, slots=True)
class ReadIndexResponse:
    """Leader -> follower: reads with ``context`` may be served once ``index`` is applied."""

    term: int
    sender: int
    recipient: int
    index: int
    context: bytes


Message = (
    AppendEntries
    | AppendResponse
    | Heartbeat
    | HeartbeatResponse
    | VoteRequest
    | VoteResponse
    | InstallSnapshot
    | TimeoutNow
    | ReadIndexRequest
    | ReadIndexResponse
)

MESSAGE_TYPES: tuple[type[Message], ...] = (
    AppendEntries,
    AppendResponse,
    Heartbeat,
    HeartbeatResponse,
    VoteRequest,
    VoteResponse,
    InstallSnapshot,
    TimeoutNow,
    ReadIndexRequest,
    ReadIndexResponse,
)


def describe(message: Message) -> str:
    """A compact one-line rendering for logs, traces and golden files."""
    head = f"{message.sender}->{message.recipient} {type(message).__name__} t{message.term}"
    match message:
        case AppendEntries():
            ents = " ".join(entry_text(e) for e in message.entries)
            return (
                f"{head} prev={message.prev_index}/t{message.prev_term} "
                f"commit={message.commit} [{ents}]"
            )
        case AppendResponse():
            if message.reject:
                return (
                    f"{head} reject index={message.index} "
                    f"hint={message.reject_hint}/t{message.hint_term}"
                )
            return f"{head} index={message.index}"
        case Heartbeat():
            read = f" read={message.read_id}" if message.read_id else ""
            return f"{head} commit={message.commit}{read}"
        case HeartbeatResponse():
            return f"{head} read={message.read_id}" if message.read_id else head
        case VoteRequest():
            flags = (" pre" if message.pre_vote else "") + (" transfer" if message.transfer else "")
            if message.voter_directory:
                flags += f" to={message.voter_directory[:8]}"
            return f"{head} last={message.last_index}/t{message.last_term}{flags}"
        case VoteResponse():
            verdict = "granted" if message.granted else "rejected"
            return f"{head} {verdict}{' pre' if message.pre_vote else ''}"
        case InstallSnapshot():
            snap = message.snapshot
            return f"{head} snapshot={snap.index}/t{snap.term} ({len(snap.data)} bytes)"
        case ReadIndexRequest():
            return f"{head} ctx={message.context!r}"
        case ReadIndexResponse():
            return f"{head} index={message.index} ctx={message.context!r}"
        case TimeoutNow():
            return head


def entry_text(entry: LogEntry) -> str:
    """``index/tTERM:data``, with no-ops and configurations named."""
    if entry.kind is EntryKind.LEADER_NOOP:
        return f"{entry.index}/t{entry.term}:noop"
    if entry.kind is EntryKind.CONFIG:
        try:
            ids = " ".join(f"n{item[0]}" for item in cbor2.loads(entry.data))
        except Exception:  # a damaged entry still gets a line in a trace
            ids = "?"
        return f"{entry.index}/t{entry.term}:config[{ids}]"
    return f"{entry.index}/t{entry.term}:{entry.data.decode('utf-8', 'backslashreplace')}"
