"""AddRaftVoter (80) and RemoveRaftVoter (81) through the Kafka listener: Kafka's request
(kio entities) onto the native one, and the native answer back in Kafka's shape."""

from __future__ import annotations

import datetime
import uuid

import pytest
from kafka_front_end import StaticView

from rillet.broker.kafka.api_table import served_schema
from rillet.broker.kafka.front_end import translate
from rillet.broker.kafka.translation import Caller, Forward
from rillet.wire.error_codes import ErrorCode
from rillet.wire.raft_voter_messages import (
    AddRaftVoterRequest,
    RaftVoterResponse,
    RemoveRaftVoterRequest,
)

DIRECTORY = uuid.UUID("0123456789abcdef0123456789abcdef")


def _forward(api: int, version: int, **fields: object) -> Forward:
    schema = served_schema(api, version)
    assert schema is not None
    entity = schema.request_type(**fields)
    action = translate(schema, entity, StaticView(), Caller("kafka-metadata-quorum", ""))
    assert isinstance(action, Forward)
    return action


@pytest.mark.parametrize("version", [0, 1])
def test_add_raft_voter_names_the_voter_and_leaves_its_raft_address_to_the_leader(
    version: int,
) -> None:
    action = _forward(
        80,
        version,
        cluster_id=None,
        timeout=datetime.timedelta(seconds=30),
        voter_id=4,
        voter_directory_id=DIRECTORY,
        listeners=(),
    )
    assert action.native == AddRaftVoterRequest(4, DIRECTORY.hex, "", "")
    answer = action.reply(RaftVoterResponse(ErrorCode.DUPLICATE_VOTER, "n4 is already a voter"))
    assert (answer.error_code, answer.error_message) == (126, "n4 is already a voter")


def test_remove_raft_voter_with_the_zero_directory_means_any_directory() -> None:
    action = _forward(81, 0, cluster_id=None, voter_id=2, voter_directory_id=uuid.UUID(int=0))
    assert action.native == RemoveRaftVoterRequest(2, "")
    assert action.reply(RaftVoterResponse(ErrorCode.NONE)).error_code == 0
    assert action.fail(ErrorCode.NOT_CONTROLLER).error_code == 41
