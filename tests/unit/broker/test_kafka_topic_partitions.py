"""DescribeTopicPartitions (75): pages of topics in name order, cut by the partition limit,
with the cursor of the next page; requests and answers go through kafka-python's classes."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from kafka.protocol.admin import DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse
from kafka_front_end import StaticView, forwarded

from rillet.broker.kafka.codec import encode_response
from rillet.broker.kafka.topic_partitions import MAX_PARTITIONS_PER_ANSWER, page
from rillet.broker.kafka.translation import KafkaEndpoint
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import MetadataResponse, PartitionMetadata, TopicMetadata

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
TOPIC_ID = str(uuid.UUID(int=7))


def _topic(name: str, count: int, error: int = 0) -> TopicMetadata:
    partitions = [PartitionMetadata(i, 1, 3, [1, 2], [1]) for i in range(count)]
    return TopicMetadata(name, error, [] if error else partitions, topic_id=TOPIC_ID)


def _shape(topics: list[TopicMetadata]) -> list[tuple[str, list[int]]]:
    return [(t.name, [p.partition for p in t.partitions]) for t in topics]


def test_a_page_takes_topics_in_name_order_up_to_the_partition_limit() -> None:
    topics = [_topic("b", 3), _topic("a", 2), _topic("c", 1)]
    assert page(topics, None, 100) == (page(topics, None, 100)[0], None)
    assert _shape(page(topics, None, 100)[0]) == [("a", [0, 1]), ("b", [0, 1, 2]), ("c", [0])]
    first, cursor = page(topics, None, 3)
    assert _shape(first) == [("a", [0, 1]), ("b", [0])] and cursor == ("b", 1)
    second, cursor = page(topics, cursor, 3)
    assert _shape(second) == [("b", [1, 2]), ("c", [0])] and cursor is None
    # A page that ends with a topic names the next topic's first partition.
    first, cursor = page(topics, None, 2)
    assert _shape(first) == [("a", [0, 1])] and cursor == ("b", 0)
    # Never more than Kafka's max.request.partition.size.limit.
    big = [_topic("x", MAX_PARTITIONS_PER_ANSWER + 5)]
    first, cursor = page(big, None, 10**6)
    assert len(first[0].partitions) == MAX_PARTITIONS_PER_ANSWER
    assert cursor == ("x", MAX_PARTITIONS_PER_ANSWER)


def test_unknown_topics_are_answered_with_their_error_and_take_no_room() -> None:
    topics = [_topic("a", 1), _topic("nope", 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]
    out, cursor = page(topics, None, 1)
    assert _shape(out) == [("a", [0]), ("nope", [])] and cursor is None
    assert out[1].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def _request(names: list[str], limit: int = 2000, cursor: tuple[str, int] | None = None) -> Any:
    r = DescribeTopicPartitionsRequest
    return r(
        topics=[r.TopicRequest(name=n) for n in names],
        response_partition_limit=limit,
        cursor=None
        if cursor is None
        else r.Cursor(topic_name=cursor[0], partition_index=cursor[1]),
    )


def test_the_listener_asks_for_the_topics_and_answers_a_page() -> None:
    view = StaticView({1: KafkaEndpoint(1, "h", 1, None), 2: KafkaEndpoint(2, "h", 2, None)})
    schema, action = forwarded(_request(["b", "a"], limit=3), 0, view)
    assert action.native.topics == ["a", "b"] and not action.native.allow_auto_topic_creation
    answer = action.reply(MetadataResponse("c", -1, [], [_topic("a", 2), _topic("b", 3)]))
    decoded = DescribeTopicPartitionsResponse.decode(
        encode_response(3, schema, answer), version=0, header=True, framed=True
    )
    assert [(t.name, len(t.partitions)) for t in decoded.topics] == [("a", 2), ("b", 1)]
    assert str(decoded.topics[0].topic_id) == TOPIC_ID
    p = decoded.topics[0].partitions[0]
    assert (p.leader_id, p.leader_epoch, p.replica_nodes, p.isr_nodes) == (1, 3, [1, 2], [1])
    assert (decoded.next_cursor.topic_name, decoded.next_cursor.partition_index) == ("b", 1)

    # All topics (an empty list), from a cursor; a failure names each topic asked for.
    schema, action = forwarded(_request([], cursor=("b", 1)), 0, view)
    assert action.native.topics is None
    answer = action.reply(MetadataResponse("c", -1, [], [_topic("a", 2), _topic("b", 3)]))
    decoded = DescribeTopicPartitionsResponse.decode(
        encode_response(3, schema, answer), version=0, header=True, framed=True
    )
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in decoded.topics] == [
        ("b", [1, 2])
    ]
    assert decoded.next_cursor is None
    schema, action = forwarded(_request(["a"]), 0, view)
    decoded = DescribeTopicPartitionsResponse.decode(
        encode_response(3, schema, action.fail(ErrorCode.AUTHORIZATION_FAILED)),
        version=0,
        header=True,
        framed=True,
    )
    assert [(t.name, t.error_code) for t in decoded.topics] == [("a", 29)]
