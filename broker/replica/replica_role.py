"""What the committed metadata makes of a local replica, and what a follower made of an
answer: the small value types the replica, the reconciler and the fetcher share.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from rillet.metadata_quorum.state import PartitionState


class FetchApplied(enum.Enum):
    """What a follower made of its leader's answer (:meth:`PartitionReplica.apply_fetch_answer`)."""

    STALE = "stale"  # the partition changed since the fetch was sent: ignored
    APPENDED = "appended"  # records (if any), high watermark and log start taken
    TRUNCATED = "truncated"  # a diverging or out-of-range suffix cut: fetch again from the end
    BACK_OFF = "back off"  # an error answer that changes nothing: wait, then fetch again


@dataclass(frozen=True, slots=True)
class ReplicaRole:
    """What the committed metadata says about this replica: leader or follower (and of
    whom), in which leader epoch, and the partition's replicas, ISR and partition epoch."""

    is_leader: bool
    leader_epoch: int
    isr: tuple[int, ...]
    node_id: int
    replicas: tuple[int, ...] = ()
    partition_epoch: int = 0
    leader_id: int = -1

    @classmethod
    def of(cls, p: PartitionState, node_id: int) -> ReplicaRole:
        """The role the committed partition state ``p`` gives replica ``node_id``."""
        return cls(
            is_leader=p.leader == node_id,
            leader_epoch=p.leader_epoch,
            isr=p.isr,
            node_id=node_id,
            replicas=p.replicas,
            partition_epoch=p.partition_epoch,
            leader_id=p.leader,
        )


@dataclass(frozen=True, slots=True)
class TopicPartitionKey:
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"
