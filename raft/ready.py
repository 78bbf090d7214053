"""What the core asks its driver to do: the Ready value, and status snapshots for humans.

The contract (the "Ready loop"), in this order:

1. persist ``snapshot`` (and restore the state machine from it), then ``compaction``, then
   ``entries`` (replacing any stored entries from the first new index on), then
   ``hard_state``;
2. if ``must_sync``, make all of that durable (fdatasync) -- only then
3. send ``messages`` (every one of them may promise that the writes above are durable: a
   vote, an append acknowledgement),
4. apply ``committed_entries`` and answer ``read_states`` once applied far enough,
5. call ``advance(ready)``, and only then ask for the next Ready.

Between ``ready()`` and ``advance()`` the driver may keep stepping messages and ticking;
what that produces waits for the next Ready.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from rillet.raft.messages import HardState, LogEntry, Message
from rillet.raft.quorum import Snapshot
from rillet.raft.read_index import ReadState


class Role(Enum):
    FOLLOWER = "follower"
    PRE_CANDIDATE = "pre-candidate"
    CANDIDATE = "candidate"
    LEADER = "leader"


@dataclass(frozen=True, slots=True)
class SoftState:
    """Volatile state the driver may want to react to (leadership changes)."""

    leader_id: int | None
    role: Role


@dataclass(frozen=True, slots=True)
class Ready:
    soft_state: SoftState | None
    hard_state: HardState | None
    entries: tuple[LogEntry, ...]
    # Received from the leader: persist it and restore the state machine from it.
    snapshot: Snapshot | None
    # Taken locally from applied state: persist it and drop the log entries it covers.
    compaction: Snapshot | None
    must_sync: bool
    messages: tuple[Message, ...]
    committed_entries: tuple[LogEntry, ...]
    read_states: tuple[ReadState, ...]


@dataclass(frozen=True, slots=True)
class Status:
    node_id: int
    role: Role
    term: int
    vote: int | None
    leader_id: int | None
    commit_index: int
    applied_index: int
    first_index: int
    last_index: int
    last_term: int
    persisted_index: int
    # Only on a leader: replica -> "state match=.. next=.." of its progress.
    progress: dict[int, str]
    transferring_to: int | None
    # The voter set in effect ("[n1 n2/0f3a9c21 ...]") and the index that set it.
    configuration: str = ""
    configuration_index: int = 0
