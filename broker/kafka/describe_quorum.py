"""DescribeQuorum (Kafka api 55, v0 to v2) onto the native request of the same number:
the metadata quorum's leader, epoch (the Raft term), high watermark (the commit index) and
each voter's log end and last-heard times, as ``kafka-metadata-quorum describe`` prints.

v2 (KIP-853) adds error messages, replica directory ids and the voters' endpoints. Kafka's
own admin client and kafka-python ask for v2 when it is offered (kafka-python 3.0 reads v1
answers with v2's fields and fails). A voter's directory id is the one its configuration
entry records (the zero id, Kafka's "unknown", for voters of the static bootstrap set).
Voters reach each other on their Raft ports, which speak no Kafka protocol: a voter's
endpoint is its Kafka listener, the address Kafka tools reach it at.

Only the Raft leader knows how far the others are, so the native request asks for the
leader's view (``leader_view``): a node that does not lead forwards it there, as Kafka's
brokers forward DescribeQuorum to the active controller (handlers/cluster.py). While no
leader is known the answer is Kafka's: the partition's NOT_LEADER_OR_FOLLOWER, and the
admin client retries. The observers are the replicas the leader sends the log to without
counting them (a node being added, with its log end), then the registered brokers that do
not vote, their log ends not known (-1): they read the metadata log through the controller.
The pysyncobj engine tells no replication progress: there every voter is -1 and the high
watermark is the leader's applied index.
"""

from __future__ import annotations

import uuid

from rillet.broker.kafka import shapes
from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.translation import ClusterView, Forward, KafkaResponse
from rillet.wire.cluster_messages import (
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    VoterState,
)
from rillet.wire.error_codes import ErrorCode

METADATA_TOPIC = "__cluster_metadata"
VOTER_LISTENER = "PLAINTEXT"  # the name Kafka's tools print before a voter's endpoint


def _replica(
    node_id: int, end: int = -1, fetch_ms: int = -1, caught_up_ms: int = -1, directory: str = ""
) -> shapes.DescribeQuorumReplicaStateShape:
    return {
        "replica_id": node_id,
        # Kafka's zero id ("unknown") when the directory is not known here.
        "replica_directory_id": uuid.UUID(directory) if directory else None,
        "log_end_offset": end,
        "last_fetch_timestamp": fetch_ms,
        "last_caught_up_timestamp": caught_up_ms,
    }


def _state(v: VoterState) -> shapes.DescribeQuorumReplicaStateShape:
    return _replica(
        v.voter_id, v.log_end_offset, v.last_fetch_ms, v.last_caught_up_ms, v.directory_id
    )


def translate_describe_quorum(
    schema: ApiSchema, req: shapes.DescribeQuorumRequests, view: ClusterView
) -> Forward[DescribeQuorumResponse]:
    def respond(
        code: int, partition: shapes.DescribeQuorumPartitionDataShape | None, voters: list[int]
    ) -> KafkaResponse:
        topics: list[shapes.DescribeQuorumTopicDataShape] = (
            [] if partition is None else [{"topic_name": METADATA_TOPIC, "partitions": [partition]}]
        )
        endpoints = view.kafka_endpoints()
        nodes: list[shapes.DescribeQuorumNodeShape] = [
            {
                "node_id": n,
                "listeners": [
                    {"name": VOTER_LISTENER, "host": endpoints[n].host, "port": endpoints[n].port}
                ],
            }
            for n in voters
            if n in endpoints
        ]
        return build(
            schema.response_type,
            {"error_code": code, "error_message": None, "topics": topics, "nodes": nodes},
        )

    def reply(resp: DescribeQuorumResponse) -> KafkaResponse:
        if resp.error_code != ErrorCode.NONE:  # Kafka's answer from a node not leading
            return respond(ErrorCode.NONE, _refused(resp), [])
        partition: shapes.DescribeQuorumPartitionDataShape = {
            "partition_index": 0,
            "error_code": ErrorCode.NONE,
            "error_message": None,
            "leader_id": resp.leader_id,
            "leader_epoch": resp.term,
            "high_watermark": resp.high_watermark,
        }
        if not resp.voter_states:  # pysyncobj: no progress known
            partition["high_watermark"] = resp.applied_index
        known = {v.voter_id: v for v in resp.voter_states}
        partition["current_voters"] = [
            _state(known[n]) if n in known else _replica(n) for n in resp.voters
        ]
        caught_up = {v.voter_id: v for v in resp.observer_states if v.voter_id not in known}
        partition["observers"] = [_state(v) for v in caught_up.values()] + [
            _replica(b.broker_id)
            for b in resp.brokers
            if b.broker_id not in resp.voters and b.broker_id not in caught_up
        ]
        return respond(ErrorCode.NONE, partition, resp.voters)

    return Forward(
        DescribeQuorumRequest(leader_view=True), reply, lambda code: respond(code, None, [])
    )


def _refused(resp: DescribeQuorumResponse) -> shapes.DescribeQuorumPartitionDataShape:
    """The partition's error, with nothing else known (Kafka's admin client reads no more)."""
    return {
        "partition_index": 0,
        "error_code": resp.error_code,
        "error_message": resp.error_message,
        "leader_id": -1,
        "leader_epoch": -1,
        "high_watermark": -1,
        "current_voters": [],
        "observers": [],
    }
