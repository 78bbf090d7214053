"""Metadata, FindCoordinator, CreateTopics, DeleteTopics and InitProducerId.

Brokers are named by their Kafka listeners (registered with the controller beside the native
one): a broker without a Kafka listener is left out of Metadata, and as a coordinator it is
not available to Kafka clients.
"""

from __future__ import annotations

from collections.abc import Collection

from rillet.broker.kafka import shapes, topic_ids
from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.error_map import kafka_message
from rillet.broker.kafka.translation import (
    Answer,
    ClusterView,
    Forward,
    KafkaResponse,
    field_or,
    millis,
)
from rillet.wire import group_messages as gm
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import (
    CreateTopicsRequest,
    CreateTopicsResponse,
    DeleteTopicsRequest,
    DeleteTopicsResponse,
    InitProducerIdRequest,
    InitProducerIdResponse,
    MetadataRequest,
    MetadataResponse,
    NewTopic,
    TopicMetadata,
)

UNKNOWN_AUTHORIZED_OPERATIONS = -(2**31)

# -- Metadata ----------------------------------------------------------------------------------


def translate_metadata(
    schema: ApiSchema, req: shapes.MetadataRequests, view: ClusterView
) -> Forward[MetadataResponse]:
    topics, ids = topic_ids.requested(req.topics)

    def reply(resp: MetadataResponse) -> KafkaResponse:
        endpoints = view.kafka_endpoints()
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "brokers": [
                    {"node_id": e.node_id, "host": e.host, "port": e.port, "rack": e.rack}
                    for _, e in sorted(endpoints.items())
                ],
                "cluster_id": resp.cluster_id,
                "controller_id": resp.controller_id,
                "topics": [
                    topic_entry(t, endpoints) for t in topic_ids.kept(resp.topics, topics, ids)
                ],
                "cluster_authorized_operations": UNKNOWN_AUTHORIZED_OPERATIONS,
            },
        )

    def fail(code: int) -> KafkaResponse:
        # Every topic asked for (all the node knows of when the client asked for all) with
        # the error and no partitions: Kafka clients keep a topic's partitions through a
        # topic error, but may take a topic missing from an all-topics answer as gone.
        names = view.topic_names() if topics is None else topics
        return build(
            schema.response_type,
            {
                "brokers": [],
                "controller_id": -1,
                "topics": [
                    {"error_code": code, "name": name, "topic_id": None, "partitions": []}
                    for name in names
                ],
            },
        )

    return Forward(
        MetadataRequest(None if ids else topics, -1, allows_auto_creation(req)), reply, fail
    )


def topic_entry(t: TopicMetadata, endpoints: Collection[int]) -> shapes.MetadataResponseTopicShape:
    """A topic and its partitions as Metadata describes them (``endpoints``: the live
    brokers, the others' replicas are offline); DescribeTopicPartitions adds to them."""
    return {
        "error_code": t.error_code,
        "name": t.name,
        "topic_id": topic_ids.kafka_topic_id(t.topic_id),
        "is_internal": False,
        "partitions": [
            {
                "error_code": p.error_code,
                "partition_index": p.partition,
                "leader_id": p.leader_id,
                "leader_epoch": p.leader_epoch,
                "replica_nodes": p.replicas,
                "isr_nodes": p.isr,
                "offline_replicas": [r for r in p.replicas if r not in endpoints],
            }
            for p in t.partitions
        ],
        "topic_authorized_operations": UNKNOWN_AUTHORIZED_OPERATIONS,
    }


def allows_auto_creation(req: shapes.MetadataRequests) -> bool:
    """Kafka's Metadata flag: a field from v4 on; before, every request allowed it (the
    node's auto.create.topics.enable still decides)."""
    return field_or(req, "allow_auto_topic_creation", True)


# -- FindCoordinator ---------------------------------------------------------------------------


def translate_find_coordinator(
    schema: ApiSchema, req: shapes.FindCoordinatorRequests, view: ClusterView
) -> Forward[gm.FindCoordinatorResponse] | Answer:
    """One coordinator (the controller) for every key; v4+ batch keys (``coordinator_keys``)
    and answer each, all authorized or none (the native request carries them all)."""
    batched = schema.version >= 4
    no_keys: tuple[str, ...] = ()
    keys = (
        [str(k) for k in field_or(req, "coordinator_keys", no_keys)]
        if batched
        else [field_or(req, "key", "")]
    )

    def respond(
        code: int, node_id: int = -1, host: str = "", port: int = -1, message: str | None = None
    ) -> KafkaResponse:
        why = kafka_message(code, message, _FIND_COORDINATOR_REFUSALS)
        if batched:
            coordinators: list[shapes.FindCoordinatorCoordinatorShape] = [
                {
                    "key": k,
                    "node_id": node_id,
                    "host": host,
                    "port": port,
                    "error_code": code,
                    "error_message": why,
                }
                for k in keys
            ]
            return build(schema.response_type, {"coordinators": coordinators})
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "node_id": node_id,
                "host": host,
                "port": port,
                "error_code": code,
                "error_message": why,
            },
        )

    def reply(resp: gm.FindCoordinatorResponse) -> KafkaResponse:
        if resp.error_code != ErrorCode.NONE:
            return respond(resp.error_code, message=resp.error_message)
        endpoint = view.kafka_endpoints().get(resp.node_id)
        if endpoint is None:
            return respond(
                ErrorCode.COORDINATOR_NOT_AVAILABLE,
                message=f"the coordinator, node {resp.node_id}, has no Kafka listener",
            )
        return respond(ErrorCode.NONE, endpoint.node_id, endpoint.host, endpoint.port)

    def fail(code: int) -> KafkaResponse:
        return respond(code)

    if not keys:
        return Answer(respond(ErrorCode.NONE))
    key_type = field_or(req, "key_type", 0)
    native = gm.FindCoordinatorRequest(keys[0], key_type, keys[1:])
    return Forward(native, reply, fail)


_FIND_COORDINATOR_REFUSALS = {
    ErrorCode.GROUP_AUTHORIZATION_FAILED: "not authorized to describe every group named",
}


# -- CreateTopics / DeleteTopics ---------------------------------------------------------------


def translate_create_topics(
    schema: ApiSchema, req: shapes.CreateTopicsRequests
) -> Forward[CreateTopicsResponse] | Answer:
    names = [str(t.name) for t in req.topics]
    manual = "manual replica assignment is not supported"
    refused = {str(t.name): manual for t in req.topics if t.assignments}

    def respond(results: dict[str, tuple[int, str | None]]) -> KafkaResponse:
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "topics": [
                    {"name": n, "error_code": results[n][0], "error_message": results[n][1]}
                    for n in dict.fromkeys(names)
                ],
            },
        )

    local: dict[str, tuple[int, str | None]] = {
        n: (int(ErrorCode.INVALID_REQUEST), why) for n, why in refused.items()
    }
    new_topics = [
        NewTopic(
            str(t.name),
            int(t.num_partitions),
            int(t.replication_factor),
            {str(c.name): str(c.value) for c in t.configs if c.value is not None},
        )
        for t in req.topics
        if str(t.name) not in refused
    ]
    if not new_topics:
        return Answer(respond(local))
    native = CreateTopicsRequest(new_topics, millis(req.timeout), bool(req.validate_only))

    def reply(resp: CreateTopicsResponse) -> KafkaResponse:
        results = dict(local)
        results.update(
            {
                r.name: (r.error_code, kafka_message(r.error_code, r.error_message))
                for r in resp.topics
            }
        )
        return respond(results)

    def fail(code: int) -> KafkaResponse:
        return respond({n: local.get(n, (code, kafka_message(code, None))) for n in names})

    return Forward(native, reply, fail)


def translate_delete_topics(
    schema: ApiSchema, req: shapes.DeleteTopicsRequests
) -> Forward[DeleteTopicsResponse]:
    names = [str(n) for n in req.topic_names]

    def respond(codes: dict[str, int]) -> KafkaResponse:
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "responses": [{"name": n, "error_code": codes[n]} for n in dict.fromkeys(names)],
            },
        )

    def reply(resp: DeleteTopicsResponse) -> KafkaResponse:
        return respond({r.name: r.error_code for r in resp.topics})

    def fail(code: int) -> KafkaResponse:
        return respond(dict.fromkeys(names, code))

    return Forward(DeleteTopicsRequest(names, millis(req.timeout)), reply, fail)


# -- InitProducerId ----------------------------------------------------------------------------


def translate_init_producer_id(
    schema: ApiSchema, req: shapes.InitProducerIdRequests
) -> Forward[InitProducerIdResponse]:
    def respond(code: int, producer_id: int = -1, epoch: int = -1) -> KafkaResponse:
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "error_code": code,
                "producer_id": producer_id,
                "producer_epoch": epoch,
            },
        )

    def reply(resp: InitProducerIdResponse) -> KafkaResponse:
        return respond(resp.error_code, resp.producer_id, resp.producer_epoch)

    native = InitProducerIdRequest(
        None if req.transactional_id is None else str(req.transactional_id),
        millis(req.transaction_timeout),
    )
    return Forward(native, reply, respond)
