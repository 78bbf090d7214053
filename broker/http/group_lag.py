"""Consumer-group lag as the node can see it: committed offsets from the metadata, ends from
the partition replicas this node hosts.

Lag is the high watermark minus the committed offset. The metadata holds every group's
committed offsets, but a partition's high watermark lives with its replicas, so a node
reports lag only for partitions it hosts (the controller reports it in /metrics; on a
cluster where every node hosts every partition, that is all of them).
"""

from __future__ import annotations

from dataclasses import dataclass

from rillet.broker.http.node_probe import NodeProbe


@dataclass(frozen=True, slots=True)
class PartitionLag:
    group_id: str
    topic: str
    partition: int
    committed_offset: int
    high_watermark: int | None  # None: this node hosts no replica of the partition

    @property
    def lag(self) -> int | None:
        if self.high_watermark is None:
            return None
        return max(self.high_watermark - self.committed_offset, 0)


def group_lags(probe: NodeProbe) -> list[PartitionLag]:
    state = probe.view.state
    out: list[PartitionLag] = []
    for group_id, offsets in sorted(state.groups.offsets.items()):
        for (topic_id, partition), entry in sorted(offsets.items()):
            topic = state.topics.get(topic_id)
            if topic is None:
                continue
            replica = probe.replicas.get(topic.name, partition)
            hw = replica.high_watermark if replica is not None else None
            out.append(PartitionLag(group_id, topic.name, partition, entry.offset, hw))
    return out
