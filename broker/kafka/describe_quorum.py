"""DescribeQuorum (Kafka api 55, v0 and v1) onto the native request of the same number:
the metadata quorum's leader, epoch (the Raft term), high watermark (the commit index) and
each voter's log end and last-heard times, as ``kafka-metadata-quorum describe`` prints.

Only the Raft leader knows how far the others are. Another node answers what it knows: the
leader and epoch, its own commit index as the high watermark, and the voters with their log
ends and times unknown (-1). (Kafka's brokers forward the request to the active controller;
answering NOT_LEADER_OR_FOLLOWER instead made Kafka's admin client retry, mostly on the same
node, until its timeout.) Registered brokers that do not vote are the observers, their log
ends not known (-1): they read the metadata log through the controller, not by fetching it
from the quorum.
"""

from __future__ import annotations

from typing import Any

from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.translation import Forward
from rillet.wire.cluster_messages import DescribeQuorumRequest, DescribeQuorumResponse
from rillet.wire.error_codes import ErrorCode

METADATA_TOPIC = "__cluster_metadata"


def _replica(node_id: int, end: int = -1, fetch_ms: int = -1, caught_up_ms: int = -1) -> Any:
    return {
        "replica_id": node_id,
        "log_end_offset": end,
        "last_fetch_timestamp": fetch_ms,
        "last_caught_up_timestamp": caught_up_ms,
    }


def translate_describe_quorum(schema: ApiSchema, req: Any) -> Forward:
    def respond(code: int, partition: dict[str, Any] | None) -> Any:
        topics = (
            [] if partition is None else [{"topic_name": METADATA_TOPIC, "partitions": [partition]}]
        )
        return build(schema.response_type, {"error_code": code, "topics": topics})

    def reply(resp: DescribeQuorumResponse) -> Any:
        partition: dict[str, Any] = {
            "partition_index": 0,
            "error_code": ErrorCode.NONE,
            "leader_id": resp.leader_id,
            "leader_epoch": resp.term,
            "high_watermark": resp.high_watermark,
        }
        if not resp.voter_states:  # not the leader: what this node knows
            partition["high_watermark"] = resp.applied_index
        known = {v.voter_id: v for v in resp.voter_states}
        partition["current_voters"] = [
            _replica(n, known[n].log_end_offset, known[n].last_fetch_ms, known[n].last_caught_up_ms)
            if n in known
            else _replica(n)
            for n in resp.voters
        ]
        partition["observers"] = [
            _replica(b.broker_id) for b in resp.brokers if b.broker_id not in resp.voters
        ]
        return respond(ErrorCode.NONE, partition)

    return Forward(DescribeQuorumRequest(), reply, lambda code: respond(code, None))
