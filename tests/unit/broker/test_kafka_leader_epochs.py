"""OffsetForLeaderEpoch through the Kafka codec, against kafka-python's classes."""

from __future__ import annotations

import pytest
from kafka.protocol.consumer.offsets import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
)
from kafka_front_end import forwarded

from rillet.broker.kafka.codec import encode_response
from rillet.wire import leader_epoch_messages as lem
from rillet.wire.error_codes import ErrorCode

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

R = OffsetForLeaderEpochRequest


def test_offset_for_leader_epoch_maps_to_the_internal_request_and_back() -> None:
    for version in (2, 3):
        request = R(
            replica_id=-1,
            topics=[
                R.OffsetForLeaderTopic(
                    topic="t",
                    partitions=[
                        R.OffsetForLeaderTopic.OffsetForLeaderPartition(
                            partition=1, current_leader_epoch=4, leader_epoch=3
                        )
                    ],
                )
            ],
        )
        schema, action = forwarded(request, version)
        assert action.native == lem.OffsetForLeaderEpochRequest([lem.EpochQuery("t", 1, 3, 4)])
        answer = lem.OffsetForLeaderEpochResponse(
            [lem.EpochEndOffset("t", 1, ErrorCode.NONE, 3, 42)]
        )
        data = encode_response(5, schema, action.reply(answer))
        decoded = OffsetForLeaderEpochResponse.decode(
            data, version=version, header=True, framed=True
        )
        (p,) = decoded.topics[0].partitions
        assert (p.error_code, p.partition, p.leader_epoch, p.end_offset) == (0, 1, 3, 42)
