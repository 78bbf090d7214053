"""The metadata cache: merging responses, leader epochs never going back, stale leaders."""

from __future__ import annotations

from rillet.client.metadata import ClusterMetadata
from rillet.client.types import TopicPartition
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import BrokerInfo, MetadataResponse, PartitionMetadata, TopicMetadata

BROKERS = [BrokerInfo(1, "a", 1), BrokerInfo(2, "b", 2)]
TP = TopicPartition("t", 0)


def response(
    leader: int, epoch: int, topics: list[TopicMetadata] | None = None
) -> MetadataResponse:
    t = TopicMetadata(
        "t",
        0,
        [PartitionMetadata(0, leader, epoch, [1, 2], [1, 2]), PartitionMetadata(1, 2, 0, [2], [2])],
    )
    return MetadataResponse("c", 1, BROKERS, [t] if topics is None else topics)


def test_update_and_lookups() -> None:
    md = ClusterMetadata()
    md.update(response(1, 3), ["t"])
    assert md.leader_for(TP) == 1 and md.leader_epoch(TP) == 3
    assert md.partition_count("t") == 2 and md.topics() == ["t"]
    assert md.leader_for(("t", 7)) is None and md.leader_for(("nope", 0)) is None
    assert [p.partition for p in md.partitions("t")] == [0, 1]


def test_an_older_epoch_does_not_bring_back_an_old_leader() -> None:
    md = ClusterMetadata()
    md.update(response(2, 5), ["t"])
    md.update(response(1, 4), ["t"])  # a lagging node's view
    assert md.leader_for(TP) == 2
    md.update(response(1, 6), ["t"])
    assert md.leader_for(TP) == 1


def test_mark_stale_forgets_the_leader_until_refreshed() -> None:
    md = ClusterMetadata()
    md.update(response(1, 3), ["t"])
    md.mark_stale(TP)
    assert md.leader_for(TP) is None and md.leader_epoch(TP) == 3
    md.update(response(1, 3), ["t"])
    assert md.leader_for(TP) == 1


def test_topic_errors_and_forgetting() -> None:
    md = ClusterMetadata()
    md.update(response(1, 0), ["t"])
    gone = TopicMetadata("t", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [])
    md.update(response(1, 0, [gone]), ["t"])
    assert not md.has_topic("t") and md.topic_errors["t"] is ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    md.update(response(1, 0), ["t"])
    assert md.has_topic("t") and "t" not in md.topic_errors
    md.update(response(1, 0, []), None)  # a full listing without "t": it was deleted
    assert not md.has_topic("t")


def test_a_leader_on_an_unknown_node_counts_as_unknown() -> None:
    md = ClusterMetadata()
    md.update(response(9, 0), ["t"])
    assert md.leader_for(TP) is None
