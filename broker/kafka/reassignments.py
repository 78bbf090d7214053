"""Kafka's AlterPartitionReassignments (45), ListPartitionReassignments (46), ElectLeaders
(43) and UnregisterBroker (64) on the native apis of the same numbers: what
``kafka-reassign-partitions``, ``kafka-leader-election`` and Admin.unregisterBroker send.

Kafka answers per topic, then per partition; the native answers are flat lists, grouped
here in the order the request named them.
"""

from __future__ import annotations

from rillet.broker.kafka import shapes
from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.error_map import kafka_message
from rillet.broker.kafka.translation import Forward, KafkaResponse, field_or
from rillet.wire.broker_admin_messages import UnregisterBrokerRequest, UnregisterBrokerResponse
from rillet.wire.reassignment_messages import (
    AlterReassignmentsRequest,
    AlterReassignmentsResponse,
    ElectLeadersRequest,
    ElectLeadersResponse,
    ListReassignmentsRequest,
    ListReassignmentsResponse,
    PartitionMove,
    PartitionOutcome,
    TopicPartitions,
)


def _per_topic(outcomes: list[PartitionOutcome]) -> dict[str, list[PartitionOutcome]]:
    """Per-partition outcomes grouped by topic, in the order topics first appear."""
    grouped: dict[str, list[PartitionOutcome]] = {}
    for o in outcomes:
        grouped.setdefault(o.topic, []).append(o)
    return grouped


def translate_alter_reassignments(
    schema: ApiSchema, req: shapes.AlterPartitionReassignmentsRequests
) -> Forward[AlterReassignmentsResponse]:
    moves = [
        PartitionMove(
            str(t.name),
            int(p.partition_index),
            None if p.replicas is None else [int(r) for r in p.replicas],
        )
        for t in req.topics
        for p in t.partitions
    ]

    def respond(code: int, message: str | None, outcomes: list[PartitionOutcome]) -> KafkaResponse:
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "error_code": code,
                "error_message": message,
                "responses": [
                    {
                        "name": topic,
                        "partitions": [
                            {
                                "partition_index": o.partition,
                                "error_code": o.error_code,
                                "error_message": o.error_message,
                            }
                            for o in found
                        ],
                    }
                    for topic, found in _per_topic(outcomes).items()
                ],
            },
        )

    def reply(resp: AlterReassignmentsResponse) -> KafkaResponse:
        return respond(resp.error_code, resp.error_message, resp.results)

    def fail(code: int) -> KafkaResponse:
        return respond(code, None, [])

    return Forward(AlterReassignmentsRequest(moves), reply, fail)


def translate_list_reassignments(
    schema: ApiSchema, req: shapes.ListPartitionReassignmentsRequests
) -> Forward[ListReassignmentsResponse]:
    topics = (
        None
        if req.topics is None
        else [
            TopicPartitions(str(t.name), [int(p) for p in t.partition_indexes]) for t in req.topics
        ]
    )

    def respond(code: int, resp: ListReassignmentsResponse | None) -> KafkaResponse:
        grouped: dict[str, list[shapes.ListPartitionReassignmentsOngoingPartitionReassignmentShape]]
        grouped = {}
        for m in resp.reassignments if resp is not None else []:
            grouped.setdefault(m.topic, []).append(
                {
                    "partition_index": m.partition,
                    "replicas": m.replicas,
                    "adding_replicas": m.adding_replicas,
                    "removing_replicas": m.removing_replicas,
                }
            )
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "error_code": code,
                "error_message": None,
                "topics": [{"name": n, "partitions": ps} for n, ps in grouped.items()],
            },
        )

    return Forward(
        ListReassignmentsRequest(topics),
        lambda resp: respond(resp.error_code, resp),
        lambda code: respond(code, None),
    )


def translate_elect_leaders(
    schema: ApiSchema, req: shapes.ElectLeadersRequests
) -> Forward[ElectLeadersResponse]:
    election = field_or(req, "election_type", 0)  # v0 knows only preferred elections
    topics = (
        None
        if req.topic_partitions is None
        else [
            TopicPartitions(str(t.topic), [int(p) for p in t.partitions])
            for t in req.topic_partitions
        ]
    )

    def respond(code: int, outcomes: list[PartitionOutcome]) -> KafkaResponse:
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "error_code": code,
                "replica_election_results": [
                    {
                        "topic": topic,
                        "partition_result": [
                            {
                                "partition_id": o.partition,
                                "error_code": o.error_code,
                                "error_message": o.error_message,
                            }
                            for o in found
                        ],
                    }
                    for topic, found in _per_topic(outcomes).items()
                ],
            },
        )

    def reply(resp: ElectLeadersResponse) -> KafkaResponse:
        return respond(resp.error_code, resp.results)

    return Forward(ElectLeadersRequest(election, topics), reply, lambda code: respond(code, []))


def translate_unregister_broker(
    schema: ApiSchema, req: shapes.UnregisterBrokerRequests
) -> Forward[UnregisterBrokerResponse]:
    """UnregisterBroker (api 64): the native request; refused while the broker holds a
    replica (see metadata_quorum/broker_admin.py)."""

    def respond(code: int, message: str | None) -> KafkaResponse:
        return build(
            schema.response_type,
            {"throttle_time": 0, "error_code": code, "error_message": message},
        )

    def reply(resp: UnregisterBrokerResponse) -> KafkaResponse:
        return respond(resp.error_code, kafka_message(resp.error_code, resp.error_message))

    return Forward(
        UnregisterBrokerRequest(int(req.broker_id)),
        reply,
        lambda code: respond(code, kafka_message(code, None)),
    )
