"""AddRaftVoter (Kafka api 80, v0 and v1) and RemoveRaftVoter (81, v0) onto the native
requests of the same numbers (KIP-853: ``kafka-metadata-quorum add-controller /
remove-controller``, Admin.addRaftVoter / removeRaftVoter).

Kafka names the new voter's Kafka-protocol listeners; rillet's voters reach each other on
their Raft ports, which a Kafka client does not know. So a node is added this way only when
it is already an observer of the leader (``quorum.observer``, or a removed voter still
running): the leader knows its Raft address from it, and its native listener from its broker
registration. ``rillet cluster add-voter`` adds any node. The answer comes once the change is
committed (v1's ``ack_when_committed`` = false is answered the same way, later than asked).
"""

from __future__ import annotations

import uuid

from rillet.broker.kafka import shapes
from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.translation import Forward, KafkaResponse
from rillet.wire.raft_voter_messages import (
    AddRaftVoterRequest,
    RaftVoterResponse,
    RemoveRaftVoterRequest,
)


def _directory(value: uuid.UUID | None) -> str:
    """Kafka's zero id (and null) mean "not known": any directory of that voter."""
    if value is None or value.int == 0:
        return ""
    return value.hex


def _forward(
    schema: ApiSchema, request: AddRaftVoterRequest | RemoveRaftVoterRequest
) -> Forward[RaftVoterResponse]:
    def respond(code: int, message: str | None) -> KafkaResponse:
        return build(
            schema.response_type,
            {"throttle_time": 0, "error_code": code, "error_message": message},
        )

    def reply(resp: RaftVoterResponse) -> KafkaResponse:
        return respond(resp.error_code, resp.error_message)

    return Forward(request, reply, lambda code: respond(code, None))


def translate_add_raft_voter(
    schema: ApiSchema, req: shapes.AddRaftVoterRequests
) -> Forward[RaftVoterResponse]:
    native = AddRaftVoterRequest(int(req.voter_id), _directory(req.voter_directory_id), "", "")
    return _forward(schema, native)


def translate_remove_raft_voter(
    schema: ApiSchema, req: shapes.RemoveRaftVoterRequests
) -> Forward[RaftVoterResponse]:
    native = RemoveRaftVoterRequest(int(req.voter_id), _directory(req.voter_directory_id))
    return _forward(schema, native)
