"""A partition's committed state, as the metadata log leaves it, and its snapshot row."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class PartitionState:
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    leader_epoch: int
    partition_epoch: int
    # A move in progress (KIP-455): replicas joining and leaving; both empty when none.
    # ``replicas`` holds both: the target set first, then the replicas being removed.
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()

    @property
    def moving(self) -> bool:
        return bool(self.adding_replicas or self.removing_replicas)

    def target_replicas(self) -> tuple[int, ...]:
        """The replica set the partition ends with when its move completes."""
        return tuple(r for r in self.replicas if r not in self.removing_replicas)

    def original_replicas(self) -> tuple[int, ...]:
        """The replica set before the move (what a cancellation returns to)."""
        return tuple(r for r in self.replicas if r not in self.adding_replicas)


def partition_row(topic_id: str, partition: int, s: PartitionState) -> list[Any]:
    """A partition's snapshot row; a move in progress adds two columns (adding, removing),
    so snapshots without moves keep their earlier form."""
    row: list[Any] = [
        topic_id,
        partition,
        list(s.replicas),
        list(s.isr),
        s.leader,
        s.leader_epoch,
        s.partition_epoch,
    ]
    if s.moving:
        row += [list(s.adding_replicas), list(s.removing_replicas)]
    return row
