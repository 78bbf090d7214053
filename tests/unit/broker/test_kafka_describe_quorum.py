"""DescribeQuorum (api 55, kafka-metadata-quorum describe): the Raft leader's view of the
metadata quorum through the Kafka listener (kafka-python encodes and decodes), Kafka's
refusal while no leader is known, and the voters' log ends and times from the engine's
progress."""

from __future__ import annotations

import pytest
from kafka.protocol.admin import DescribeQuorumRequest, DescribeQuorumResponse
from kafka_front_end import StaticView, forwarded

from rillet.broker.handlers.quorum_replication import voter_states
from rillet.broker.kafka.codec import encode_response
from rillet.broker.kafka.translation import KafkaEndpoint
from rillet.raft.quorum import ReplicaProgress
from rillet.wire import cluster_messages as cm
from rillet.wire.error_codes import ErrorCode

NOW_MS = 1_700_000_000_000
Q = DescribeQuorumRequest


def test_voters_log_ends_and_when_they_were_heard_and_caught_up() -> None:
    progress = [
        ReplicaProgress(1, "", True, 40, 0),
        ReplicaProgress(2, "", True, 40, 150),
        ReplicaProgress(3, "", True, 31, 900),
        ReplicaProgress(4, "", False, 12, 50),  # an observer being caught up to join
    ]
    assert voter_states(progress, NOW_MS) == [
        cm.VoterState(1, 40, NOW_MS, NOW_MS),
        cm.VoterState(2, 40, NOW_MS - 150, NOW_MS - 150),
        cm.VoterState(3, 31, NOW_MS - 900, -1),  # behind: not caught up as far as known
    ]
    assert voter_states(progress, NOW_MS, voters=False) == [cm.VoterState(4, 12, NOW_MS - 50, -1)]
    assert voter_states([], NOW_MS) == []


def _native(states: list[cm.VoterState]) -> cm.DescribeQuorumResponse:
    brokers = [cm.BrokerStatus(n, "h", 9092, 1, False) for n in (1, 2, 3, 4)]
    return cm.DescribeQuorumResponse(
        0, 1, 1, 7, [1, 2, 3], 40, brokers, 1, 1, [], high_watermark=40, voter_states=states
    )


def _refusal() -> cm.DescribeQuorumResponse:
    return cm.DescribeQuorumResponse(
        ErrorCode.NOT_LEADER_OR_FOLLOWER, 2, -1, 8, [1, 2, 3], 40, [], 0, 0, [], "", "no leader"
    )


@pytest.mark.parametrize("version", [0, 1, 2])
def test_the_leader_s_view_in_kafkas_shape_and_kafkas_refusal_without_a_leader(
    version: int,
) -> None:
    request = Q(
        topics=[
            Q.TopicData(
                topic_name="__cluster_metadata",
                partitions=[Q.TopicData.PartitionData(partition_index=0)],
            )
        ]
    )
    view = StaticView({n: KafkaEndpoint(n, f"h{n}", 9090 + n, None) for n in (1, 2, 3, 4)})
    schema, action = forwarded(request, version, view)
    assert action.native == cm.DescribeQuorumRequest(leader_view=True)  # from any node
    states = [cm.VoterState(1, 40, NOW_MS, NOW_MS), cm.VoterState(3, 31, NOW_MS - 900, -1)]
    decoded = DescribeQuorumResponse.decode(
        encode_response(2, schema, action.reply(_native(states))),
        version=version,
        header=True,
        framed=True,
    )
    [topic] = decoded.topics
    [p] = topic.partitions
    assert (topic.topic_name, p.error_code, p.leader_id, p.leader_epoch, p.high_watermark) == (
        "__cluster_metadata",
        0,
        1,
        7,
        40,
    )
    voters = [(v.replica_id, v.log_end_offset) for v in p.current_voters]
    assert voters == [(1, 40), (2, -1), (3, 31)]  # 2: no progress known
    assert [(o.replica_id, o.log_end_offset) for o in p.observers] == [(4, -1)]
    if version >= 1:
        assert [v.last_caught_up_timestamp for v in p.current_voters] == [NOW_MS, -1, -1]
    if version >= 2:  # kafka-python 3.0 reads these fields of every version it is offered
        assert (decoded.error_message, p.error_message) == (None, None)
        nodes = [
            (n.node_id, [(e.name, e.host, e.port) for e in n.listeners]) for n in decoded.nodes
        ]
        assert nodes == [(v, [("PLAINTEXT", f"h{v}", 9090 + v)]) for v in (1, 2, 3)]

    # The pysyncobj engine tells no progress: every voter unknown, the applied index as HW.
    pysyncobj = DescribeQuorumResponse.decode(
        encode_response(2, schema, action.reply(_native([]))),
        version=version,
        header=True,
        framed=True,
    )
    [fp] = pysyncobj.topics[0].partitions
    assert (fp.error_code, fp.leader_id, fp.high_watermark) == (ErrorCode.NONE, 1, 40)
    assert [(v.replica_id, v.log_end_offset) for v in fp.current_voters] == [
        (1, -1),
        (2, -1),
        (3, -1),
    ]

    # No leader known: Kafka's answer, the partition's NOT_LEADER_OR_FOLLOWER (the admin
    # client retries), never log ends of -1 beside real values.
    refused = DescribeQuorumResponse.decode(
        encode_response(2, schema, action.reply(_refusal())),
        version=version,
        header=True,
        framed=True,
    )
    assert refused.error_code == ErrorCode.NONE
    [rp] = refused.topics[0].partitions
    assert (rp.error_code, rp.leader_id, list(rp.current_voters), list(rp.observers)) == (
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        -1,
        [],
        [],
    )
    if version >= 2:
        assert rp.error_message == "no leader"
