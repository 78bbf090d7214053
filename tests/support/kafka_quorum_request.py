"""Kafka's DescribeQuorum request for the metadata partition, built with kafka-python's
protocol classes: what the tests that ask one node directly send (Kafka's own admin client
picks the node it asks)."""

from __future__ import annotations

from typing import Any

METADATA_TOPIC = "__cluster_metadata"


def describe_quorum_request() -> Any:
    """The request (kafka-python's, imported here: it loads its schemas when first used)."""
    from kafka.protocol.admin import DescribeQuorumRequest

    q = DescribeQuorumRequest
    return q(
        topics=[
            q.TopicData(
                topic_name=METADATA_TOPIC,
                partitions=[q.TopicData.PartitionData(partition_index=0)],
            )
        ]
    )
