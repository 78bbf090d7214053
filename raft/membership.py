"""The voter set as data: who votes, under which identity, and where that is written down.

A voter is a (node id, directory id) pair, as in Kafka's KIP-853. The directory id is a
random UUID drawn when a node's data directory is formatted and kept in it: a node whose
disk was wiped comes back with the same node id but a new directory id, so it cannot vote
under its old identity (it lost the record of the votes it cast). An empty directory id
means "not known": the voters of a cluster bootstrapped from static configuration, which
match any directory of that node id (the only possible identity before any change).

A configuration is recorded in the log as an entry of kind CONFIG whose data is the CBOR
array ``[[node_id, directory_id], ...]``; a voter added at run time also carries where it
is reached, ``[node_id, directory_id, raft "host:port", listener "host:port"]``, so every
replica learns a new voter's addresses with the entry that makes it one (and keeps them in
its log and snapshots across restarts). Addresses are not part of a voter's identity.
The configuration in effect on a node is that of the latest CONFIG entry in its log,
committed or not (Raft dissertation, section 4.1); a snapshot carries the configuration as
of its index, so compaction never loses it.
``ConfigHistory`` keeps the configuration entries a log holds, so that cutting a conflicting
suffix falls back to the configuration before it.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, field

import cbor2

from rillet.raft.core_errors import CoreContractError, MalformedMessage
from rillet.raft.messages import EntryKind, LogEntry

# A directory id is a UUID in its 32-digit hex form; "" is "unknown" (static bootstrap).
DIRECTORY_ID_CHARS = 32
MAX_VOTERS = 64
MAX_ADDRESS_CHARS = 300  # host:port, a DNS name at most 253 characters long


@dataclass(frozen=True, slots=True, order=True)
class Voter:
    node_id: int
    directory_id: str = ""
    # Where the voter is reached ("host:port"; "" when the static configuration says).
    raft_address: str = field(default="", compare=False)
    listener_address: str = field(default="", compare=False)

    def matches(self, node_id: int, directory_id: str) -> bool:
        """Is (node_id, directory_id) this voter? An unknown directory on either side
        matches (a static voter, or a peer that does not say)."""
        return node_id == self.node_id and (
            not self.directory_id or not directory_id or directory_id == self.directory_id
        )

    def describe(self) -> str:
        return f"n{self.node_id}" + (f"/{self.directory_id[:8]}" if self.directory_id else "")


@dataclass(frozen=True, slots=True)
class Configuration:
    """A voter set, sorted by node id; at most one directory per node id."""

    voters: tuple[Voter, ...]

    def __post_init__(self) -> None:
        ids = [v.node_id for v in self.voters]
        if len(set(ids)) != len(ids):
            raise CoreContractError(f"a node id appears twice among the voters {ids}")
        if any(i < 1 for i in ids):
            raise CoreContractError("node ids start at 1")
        if list(self.voters) != sorted(self.voters):
            object.__setattr__(self, "voters", tuple(sorted(self.voters)))

    @classmethod
    def of(cls, node_ids: Iterable[int]) -> Configuration:
        """The static configuration: these node ids, directories unknown."""
        return cls(tuple(Voter(n) for n in sorted(set(node_ids))))

    def ids(self) -> frozenset[int]:
        return frozenset(v.node_id for v in self.voters)

    def voter(self, node_id: int) -> Voter | None:
        return next((v for v in self.voters if v.node_id == node_id), None)

    def has(self, node_id: int, directory_id: str) -> bool:
        voter = self.voter(node_id)
        return voter is not None and voter.matches(node_id, directory_id)

    def quorum_size(self) -> int:
        return len(self.voters) // 2 + 1

    def with_voter(self, voter: Voter) -> Configuration:
        return Configuration((*(v for v in self.voters if v.node_id != voter.node_id), voter))

    def without(self, node_id: int) -> Configuration:
        return Configuration(tuple(v for v in self.voters if v.node_id != node_id))

    def changed_servers(self, other: Configuration) -> int:
        """How many voters differ between the two (a changed directory counts as one)."""
        mine, theirs = set(self.voters), set(other.voters)
        ids = {v.node_id for v in mine ^ theirs}
        return len(ids)

    def describe(self) -> str:
        return "[" + " ".join(v.describe() for v in self.voters) + "]"

    # -- encoding -------------------------------------------------------------------------

    def encode(self) -> bytes:
        return cbor2.dumps([_encode_voter(v) for v in self.voters])

    @classmethod
    def decode(cls, data: bytes) -> Configuration:
        """Raises MalformedMessage on anything but a valid configuration."""
        try:
            items = cbor2.loads(data)
        except Exception as exc:  # cbor2 raises assorted types on garbage
            reason = type(exc).__name__
            raise MalformedMessage(f"configuration is not valid CBOR: {reason}") from None
        if not isinstance(items, list) or not 1 <= len(items) <= MAX_VOTERS:
            raise MalformedMessage(f"a configuration is an array of 1 to {MAX_VOTERS} voters")
        voters = []
        for item in items:
            voters.append(_decode_voter(item))
        try:
            return cls(tuple(voters))
        except CoreContractError as exc:
            raise MalformedMessage(str(exc)) from None


def _encode_voter(voter: Voter) -> list[int | str]:
    if voter.raft_address or voter.listener_address:
        return [voter.node_id, voter.directory_id, voter.raft_address, voter.listener_address]
    return [voter.node_id, voter.directory_id]


def _decode_voter(item: object) -> Voter:
    if (
        not isinstance(item, list)
        or len(item) not in (2, 4)
        or not isinstance(item[0], int)
        or isinstance(item[0], bool)
        or not all(isinstance(part, str) for part in item[1:])
        or len(item[1]) not in (0, DIRECTORY_ID_CHARS)
        or any(len(part) > MAX_ADDRESS_CHARS for part in item[2:])
    ):
        raise MalformedMessage(
            "a voter is [node id, directory id] or [node id, directory id, raft, listener]"
        )
    return Voter(*item)


def config_entry(index: int, term: int, configuration: Configuration) -> LogEntry:
    return LogEntry(index, term, configuration.encode(), EntryKind.CONFIG)


class ConfigHistory:
    """The configurations recorded at or after the snapshot, by log index, oldest first.
    The first one is the snapshot's (or the static bootstrap configuration at index 0)."""

    def __init__(self, base_index: int, base: Configuration) -> None:
        self._indexes = [base_index]
        self._configs = [base]

    def latest(self) -> Configuration:
        return self._configs[-1]

    def latest_index(self) -> int:
        return self._indexes[-1]

    def at(self, index: int) -> Configuration:
        """The configuration in effect after entry ``index`` (within the held range)."""
        position = bisect.bisect_right(self._indexes, index) - 1
        return self._configs[max(position, 0)]

    def previous(self) -> Configuration:
        """The configuration before the latest (the latest itself when there is one)."""
        return self._configs[-2] if len(self._configs) > 1 else self._configs[-1]

    def entries_appended(self, entries: Iterable[LogEntry]) -> None:
        """Entries written from ``entries[0].index`` on replace any held from there."""
        first = True
        for entry in entries:
            if first:
                self.truncate_from(entry.index)
                first = False
            if entry.kind is EntryKind.CONFIG:
                self._indexes.append(entry.index)
                self._configs.append(Configuration.decode(entry.data))

    def truncate_from(self, index: int) -> None:
        while len(self._indexes) > 1 and self._indexes[-1] >= index:
            self._indexes.pop()
            self._configs.pop()

    def compact_to(self, index: int) -> Configuration:
        """Forget configurations superseded at ``index``; returns the one in effect there."""
        current = self.at(index)
        keep = bisect.bisect_right(self._indexes, index)
        self._indexes = [index, *self._indexes[keep:]]
        self._configs = [current, *self._configs[keep:]]
        return current

    def reset(self, index: int, configuration: Configuration) -> None:
        self._indexes = [index]
        self._configs = [configuration]
