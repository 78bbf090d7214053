"""Kafka's DeleteGroups (v0-1) and OffsetDelete (v0) onto the native requests of the same
numbers.

DeleteGroups: one result per group named (GROUP_NOT_EMPTY while it has members,
GROUP_ID_NOT_FOUND for a group rillet does not know, NOT_COORDINATOR from a node that is not
the coordinator). OffsetDelete: a group-level error and one per partition asked about
(GROUP_SUBSCRIBED_TO_TOPIC while the group's members read the topic,
UNKNOWN_TOPIC_OR_PARTITION); with a group-level error the partitions are answered without
errors of their own, as Kafka does."""

from __future__ import annotations

from rillet.broker.kafka import shapes
from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.translation import Forward, KafkaResponse
from rillet.wire import group_messages as gm


def translate_delete_groups(
    schema: ApiSchema, req: shapes.DeleteGroupsRequests
) -> Forward[gm.DeleteGroupsResponse]:
    names = list(dict.fromkeys(str(g) for g in req.groups_names))

    def respond(codes: dict[str, int]) -> KafkaResponse:
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "results": [{"group_id": g, "error_code": codes[g]} for g in names],
            },
        )

    def reply(resp: gm.DeleteGroupsResponse) -> KafkaResponse:
        codes = {r.group_id: r.error_code for r in resp.results}
        return respond({g: codes.get(g, 0) for g in names})

    def fail(code: int) -> KafkaResponse:
        return respond(dict.fromkeys(names, code))

    return Forward(gm.DeleteGroupsRequest(names), reply, fail)


def translate_offset_delete(
    schema: ApiSchema, req: shapes.OffsetDeleteRequests
) -> Forward[gm.DeleteGroupOffsetsResponse]:
    asked = {str(t.name): [int(p.partition_index) for p in t.partitions] for t in req.topics}

    def respond(code: int, errors: dict[tuple[str, int], int]) -> KafkaResponse:
        return build(
            schema.response_type,
            {
                "error_code": code,
                "throttle_time": 0,
                "topics": [
                    {
                        "name": topic,
                        "partitions": [
                            {"partition_index": p, "error_code": errors.get((topic, p), 0)}
                            for p in partitions
                        ],
                    }
                    for topic, partitions in asked.items()
                ],
            },
        )

    def reply(resp: gm.DeleteGroupOffsetsResponse) -> KafkaResponse:
        errors = {(p.topic, p.partition): p.error_code for p in resp.partitions}
        return respond(resp.error_code, errors)

    def fail(code: int) -> KafkaResponse:
        return respond(code, {})

    request = gm.DeleteGroupOffsetsRequest(
        str(req.group_id), [gm.GroupTopicPartitions(t, ps) for t, ps in asked.items()]
    )
    return Forward(request, reply, fail)
