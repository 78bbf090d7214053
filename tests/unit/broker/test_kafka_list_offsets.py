"""ListOffsets v6 to v9 (flexible; v7's max timestamp -3, as kafka-get-offsets --time -3 asks)
through the Kafka listener, encoded and decoded by kafka-python."""

from __future__ import annotations

import pytest
from kafka.protocol.consumer import ListOffsetsRequest, ListOffsetsResponse
from kafka_front_end import forwarded

from rillet.broker.kafka.codec import encode_response
from rillet.wire import messages as m
from rillet.wire.api import MAX_TIMESTAMP
from rillet.wire.error_codes import ErrorCode

LO = ListOffsetsRequest


@pytest.mark.parametrize("version", [6, 7, 8, 9])
def test_max_timestamp_requests_and_answers_in_the_flexible_versions(version: int) -> None:
    request = LO(
        replica_id=-1,
        isolation_level=0,
        topics=[
            LO.ListOffsetsTopic(
                name="t",
                partitions=[
                    LO.ListOffsetsTopic.ListOffsetsPartition(
                        partition_index=p, current_leader_epoch=-1, timestamp=MAX_TIMESTAMP
                    )
                    for p in (0, 1)
                ],
            )
        ],
    )
    schema, action = forwarded(request, version)
    assert schema.flexible
    assert action.native == m.ListOffsetsRequest(
        [m.ListOffsetsPartition("t", 0, MAX_TIMESTAMP), m.ListOffsetsPartition("t", 1, -3)]
    )
    answer = action.reply(
        m.ListOffsetsResponse(
            [
                m.ListOffsetsPartitionResponse("t", 0, ErrorCode.NONE, 41, 1_700_000_000_123),
                m.ListOffsetsPartitionResponse("t", 1, ErrorCode.NONE, -1, -1),
            ]
        )
    )
    decoded = ListOffsetsResponse.decode(
        encode_response(5, schema, answer), version=version, header=True, framed=True
    )
    [topic] = decoded.topics
    assert [(p.partition_index, p.error_code, p.offset, p.timestamp) for p in topic.partitions] == [
        (0, 0, 41, 1_700_000_000_123),
        (1, 0, -1, -1),
    ]
