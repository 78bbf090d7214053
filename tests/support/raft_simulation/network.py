"""A simulated network between Raft nodes: loss, delay, duplication, reordering, partitions.

Each message gets its fate from the run's seeded RNG when it is sent: dropped, delivered
once, or delivered twice, each copy after its own random delay (so messages overtake one
another: reordering comes from delay jitter, and an occasional long delay lets a message
arrive after elections have moved on, i.e. stale). Partitions block directed pairs; they are
checked both when a message is sent and when it arrives, so a message in flight when a cut
happens is lost too. One-way cuts model asymmetric failures (A hears B, B does not hear A).
A buffering partition holds what it blocks and delivers it all when it heals, the way TCP
retransmits after a link comes back: a flood of messages from terms that are long over.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass

from rillet.raft.messages import Message


@dataclass(frozen=True, slots=True)
class NetworkProfile:
    drop_probability: float = 0.0
    duplicate_probability: float = 0.0
    min_delay_us: int = 100
    max_delay_us: int = 2_000
    # A small share of messages is held much longer: stale messages across term changes.
    long_delay_probability: float = 0.0
    max_long_delay_us: int = 200_000
    # A share of messages is also re-delivered much later, like a copy stuck in a buffer:
    # acknowledgements and votes from terms long gone must be ignored.
    replay_probability: float = 0.0
    max_replay_delay_us: int = 1_000_000

    @classmethod
    def random(cls, rng: random.Random) -> NetworkProfile:
        """A profile for one chaos run, from calm to very lossy."""
        return cls(
            drop_probability=rng.choice([0.0, 0.01, 0.05, 0.15]),
            duplicate_probability=rng.choice([0.0, 0.02, 0.1]),
            min_delay_us=rng.choice([50, 200]),
            max_delay_us=rng.choice([1_000, 5_000, 20_000]),
            long_delay_probability=rng.choice([0.0, 0.005, 0.03, 0.1]),
            max_long_delay_us=rng.choice([50_000, 300_000]),
            replay_probability=rng.choice([0.0, 0.01, 0.05]),
        )


CALM = NetworkProfile()


@dataclass(slots=True)
class NetworkStats:
    sent: int = 0
    dropped: int = 0
    duplicated: int = 0
    replayed: int = 0
    blocked: int = 0


class SimNetwork:
    def __init__(self, nodes: Iterable[int], rng: random.Random, profile: NetworkProfile):
        self.nodes = sorted(nodes)
        self.rng = rng
        self.profile = profile
        self.blocked: set[tuple[int, int]] = set()
        self.buffering = False
        self._held: list[Message] = []
        self.stats = NetworkStats()

    # -- faults -------------------------------------------------------------------------

    def partition(self, groups: list[list[int]], buffering: bool = False) -> None:
        """Nodes talk only within their group (nodes in no group talk to nobody)."""
        self.buffering = buffering
        group_of = {n: i for i, group in enumerate(groups) for n in group}
        self.blocked = {
            (a, b)
            for a in self.nodes
            for b in self.nodes
            if a != b and (a not in group_of or group_of.get(b) != group_of[a])
        }

    def cut_one_way(self, sender: int, recipient: int) -> None:
        self.blocked.add((sender, recipient))

    def heal(self) -> list[Message]:
        """Reconnect everyone; returns the messages a buffering partition held back."""
        self.blocked.clear()
        self.buffering = False
        held, self._held = self._held, []
        return held

    def is_blocked(self, sender: int, recipient: int) -> bool:
        return (sender, recipient) in self.blocked

    # -- fates --------------------------------------------------------------------------

    def delays_us(self, message: Message) -> list[int]:
        """Delivery delays of the copies of one message (empty: lost or held)."""
        self.stats.sent += 1
        if self.is_blocked(message.sender, message.recipient):
            self.stats.blocked += 1
            if self.buffering:
                self._held.append(message)
            return []
        profile = self.profile
        if self.rng.random() < profile.drop_probability:
            self.stats.dropped += 1
            return []
        copies = 1
        if self.rng.random() < profile.duplicate_probability:
            copies = 2
            self.stats.duplicated += 1
        delays = []
        for _ in range(copies):
            if self.rng.random() < profile.long_delay_probability:
                delays.append(self.rng.randint(profile.max_delay_us, profile.max_long_delay_us))
            else:
                delays.append(self.rng.randint(profile.min_delay_us, profile.max_delay_us))
        if self.rng.random() < profile.replay_probability:
            delays.append(self.rng.randint(profile.max_delay_us, profile.max_replay_delay_us))
            self.stats.replayed += 1
        return delays
