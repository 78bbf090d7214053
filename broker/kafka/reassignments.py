"""Kafka's AlterPartitionReassignments (45), ListPartitionReassignments (46), ElectLeaders
(43) and UnregisterBroker (64) on the native apis of the same numbers: what
``kafka-reassign-partitions``, ``kafka-leader-election`` and Admin.unregisterBroker send.

Kafka answers per topic, then per partition; the native answers are flat lists, grouped
here in the order the request named them.
"""

from __future__ import annotations

from typing import Any

from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.error_map import kafka_message
from rillet.broker.kafka.translation import Forward
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


def _per_topic(
    outcomes: list[PartitionOutcome], topic_key: str, list_key: str, partition_key: str
) -> list[dict[str, Any]]:
    """Per-partition outcomes grouped by topic, under the field names of the api's answer."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for o in outcomes:
        grouped.setdefault(o.topic, []).append(
            {
                partition_key: o.partition,
                "error_code": o.error_code,
                "error_message": o.error_message,
            }
        )
    return [{topic_key: topic, list_key: ps} for topic, ps in grouped.items()]


def translate_alter_reassignments(schema: ApiSchema, req: Any) -> Forward:
    moves = [
        PartitionMove(
            str(t.name),
            int(p.partition_index),
            None if p.replicas is None else [int(r) for r in p.replicas],
        )
        for t in req.topics
        for p in t.partitions
    ]

    def respond(code: int, message: str | None, outcomes: list[PartitionOutcome]) -> Any:
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "error_code": code,
                "error_message": message,
                "responses": _per_topic(outcomes, "name", "partitions", "partition_index"),
            },
        )

    def reply(resp: AlterReassignmentsResponse) -> Any:
        return respond(resp.error_code, resp.error_message, resp.results)

    def fail(code: int) -> Any:
        return respond(code, None, [])

    return Forward(AlterReassignmentsRequest(moves), reply, fail)


def translate_list_reassignments(schema: ApiSchema, req: Any) -> Forward:
    topics = (
        None
        if req.topics is None
        else [
            TopicPartitions(str(t.name), [int(p) for p in t.partition_indexes]) for t in req.topics
        ]
    )

    def respond(code: int, resp: ListReassignmentsResponse | None) -> Any:
        grouped: dict[str, list[dict[str, Any]]] = {}
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


def translate_elect_leaders(schema: ApiSchema, req: Any) -> Forward:
    election = int(getattr(req, "election_type", 0))  # v0 knows only preferred elections
    topics = (
        None
        if req.topic_partitions is None
        else [
            TopicPartitions(str(t.topic), [int(p) for p in t.partitions])
            for t in req.topic_partitions
        ]
    )

    def respond(code: int, outcomes: list[PartitionOutcome]) -> Any:
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "error_code": code,
                "replica_election_results": _per_topic(
                    outcomes, "topic", "partition_result", "partition_id"
                ),
            },
        )

    def reply(resp: ElectLeadersResponse) -> Any:
        return respond(resp.error_code, resp.results)

    return Forward(ElectLeadersRequest(election, topics), reply, lambda code: respond(code, []))


def translate_unregister_broker(schema: ApiSchema, req: Any) -> Forward:
    """UnregisterBroker (api 64): the native request; refused while the broker holds a
    replica (see metadata_quorum/broker_admin.py)."""

    def respond(code: int, message: str | None) -> Any:
        return build(
            schema.response_type,
            {"throttle_time": 0, "error_code": code, "error_message": message},
        )

    def reply(resp: UnregisterBrokerResponse) -> Any:
        return respond(resp.error_code, kafka_message(resp.error_code, resp.error_message))

    return Forward(
        UnregisterBrokerRequest(int(req.broker_id)),
        reply,
        lambda code: respond(code, kafka_message(code, None)),
    )
