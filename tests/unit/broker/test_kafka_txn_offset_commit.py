"""TxnOffsetCommit (28) v3 through the Kafka codec: the version Kafka Streams' exactly_once_v2
producer insists on (it refuses a broker serving only v0-2). Written with kio, as a Java
client writes it; the member and generation it names reach the coordinator, which fences
stale members (tests/unit/metadata_quorum/test_txn_offset_fencing.py)."""

from __future__ import annotations

from kio.schema.txn_offset_commit.v3.request import TxnOffsetCommitRequestPartition as Part
from kio.schema.txn_offset_commit.v3.request import TxnOffsetCommitRequestTopic as Topic
from test_kafka_consumer_groups import answered, through_listener

from rillet.broker.kafka.api_table import SUPPORTED
from rillet.wire import transaction_messages as tm
from rillet.wire.error_codes import ErrorCode


def test_apiversions_advertises_txn_offset_commit_v3() -> None:
    assert SUPPORTED[28] == (0, 3)


def test_a_v3_commit_becomes_the_coordinator_s_request_and_its_answer() -> None:
    schema, action = through_listener(
        28,
        3,
        transactional_id="app-1",
        group_id="app",
        producer_id=7,
        producer_epoch=2,
        generation_id=5,
        member_id="member-1",
        group_instance_id=None,
        topics=(
            Topic(
                name="words",
                partitions=(
                    Part(
                        partition_index=0,
                        committed_offset=12,
                        committed_leader_epoch=-1,
                        committed_metadata="",
                    ),
                    Part(
                        partition_index=1,
                        committed_offset=3,
                        committed_leader_epoch=-1,
                        committed_metadata=None,
                    ),
                ),
            ),
        ),
    )
    assert schema.flexible
    assert action.native == tm.TxnOffsetCommitRequest(
        "app-1",
        "app",
        7,
        2,
        [tm.TxnCommitOffset("words", 0, 12, ""), tm.TxnCommitOffset("words", 1, 3, "")],
        member_id="member-1",
        generation=5,
    )
    resp = tm.TxnOffsetCommitResponse(
        ErrorCode.NONE, [tm.TxnPartitionResult("words", 1, ErrorCode.PRODUCER_FENCED)]
    )
    entity = answered(schema, action.reply(resp))
    (topic,) = entity.topics
    assert topic.name == "words"
    assert [(p.partition_index, p.error_code) for p in topic.partitions] == [
        (0, ErrorCode.NONE),
        (1, ErrorCode.PRODUCER_FENCED),
    ]
