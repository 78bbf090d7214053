"""ConsumerGroupHeartbeat (68) and ConsumerGroupDescribe (69): Kafka's consumer group protocol
(KIP-848) onto the group coordinator's heartbeat and group descriptions.

The heartbeat goes as rillet's own with ``member_epoch`` set, topics named by topic id, and
Kafka's nulls ("unchanged since my last heartbeat") kept as such for the coordinator to fill
from the member's record. Kafka members send no session timeout (the coordinator's
``consumer_session_timeout_ms`` applies) and a rebalance timeout that is not used: a member
releases partitions on its next heartbeat, and one that stops heartbeating expires.
"""

from __future__ import annotations

from rillet.broker.kafka import shapes
from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.error_map import kafka_message
from rillet.broker.kafka.topic_ids import kafka_topic_id
from rillet.broker.kafka.translation import Caller, Forward, KafkaResponse, optional_field
from rillet.wire import group_messages as gm
from rillet.wire.error_codes import ErrorCode

UNKNOWN_AUTHORIZED_OPERATIONS = -(2**31)
CONSUMER_MEMBER_TYPE = 1  # ConsumerGroupDescribe v1's member_type (-1: unknown)
CLASSIC_MEMBER_TYPE = 0
_NOT_A_CONSUMER_GROUP = "the group uses the classic (JoinGroup) protocol"


def translate_heartbeat(
    schema: ApiSchema, req: shapes.ConsumerGroupHeartbeatRequests, caller: Caller
) -> Forward[gm.ConsumerGroupHeartbeatResponse]:
    names = req.subscribed_topic_names
    regex = optional_field(req, "subscribed_topic_regex", str)  # v1+
    owned = req.topic_partitions
    native = gm.ConsumerGroupHeartbeatRequest(
        str(req.group_id),
        str(req.member_id),
        0,  # the coordinator's consumer_session_timeout_ms
        topics=[str(t) for t in names or ()],
        pattern=regex or None,
        assignor=req.server_assignor or "",
        instance_id=req.instance_id,
        client_host=caller.client_host,
        owned=None
        if owned is None
        else [
            gm.GroupTopicPartitions(str(tp.topic_id), [int(p) for p in tp.partitions])
            for tp in owned
        ],
        member_epoch=int(req.member_epoch),
        by_topic_id=True,
        keep_topics=names is None,
        keep_pattern=regex is None,
        client_id=caller.client_id or "",
    )

    def respond(resp: gm.ConsumerGroupHeartbeatResponse) -> KafkaResponse:
        ok = resp.error_code == ErrorCode.NONE
        assignment: shapes.ConsumerGroupHeartbeatAssignmentShape | None = None
        if ok and resp.generation >= 0:
            assignment = {
                "topic_partitions": [
                    {
                        "topic_id": kafka_topic_id(tp.topic_id or tp.topic),
                        "partitions": tp.partitions,
                    }
                    for tp in resp.assignment
                ]
            }
        return build(
            schema.response_type,
            {
                "error_code": resp.error_code,
                "error_message": resp.error_message,
                "member_id": resp.member_id or None,
                "member_epoch": resp.generation if ok else 0,
                "heartbeat_interval": resp.heartbeat_interval_ms if ok else 0,
                "assignment": assignment,
            },
        )

    return Forward(native, respond, lambda code: respond(gm.ConsumerGroupHeartbeatResponse(code)))


def _partitions(
    parts: list[gm.GroupTopicPartitions],
) -> list[shapes.ConsumerGroupDescribeTopicPartitionsShape]:
    return [
        {
            "topic_id": kafka_topic_id(tp.topic_id),
            "topic_name": tp.topic,
            "partitions": tp.partitions,
        }
        for tp in parts
    ]


def _group(g: gm.GroupDescription) -> shapes.ConsumerGroupDescribeDescribedGroupShape:
    code: int
    message: str | None
    if g.classic:
        code, message = ErrorCode.GROUP_ID_NOT_FOUND, _NOT_A_CONSUMER_GROUP
    elif g.error_code == ErrorCode.GROUP_ID_NOT_FOUND:
        code, message = g.error_code, f"group {g.group_id} not found"
    else:
        code, message = g.error_code, None
    if code != ErrorCode.NONE:
        return _failed(g.group_id, code, message)
    converging = any(m.owned != m.target for m in g.members)
    state = "Empty" if not g.members else ("Reconciling" if converging else "Stable")
    return {
        "error_code": code,
        "error_message": None,
        "group_id": g.group_id,
        "group_state": state,
        "group_epoch": max(g.generation, 0),
        "assignment_epoch": max(g.generation, 0),
        "assignor_name": _kafka_assignor(g.assignor),
        "members": [
            {
                "member_id": m.member_id,
                "instance_id": m.instance_id,
                "rack_id": None,
                "member_epoch": max(m.epoch, 0),
                "client_id": m.client_id,
                "client_host": m.client_host,
                "subscribed_topic_names": m.topics,
                "subscribed_topic_regex": m.pattern,
                "assignment": {"topic_partitions": _partitions(m.owned)},
                "target_assignment": {"topic_partitions": _partitions(m.target)},
                "member_type": (
                    CONSUMER_MEMBER_TYPE if m.classic_protocol is None else CLASSIC_MEMBER_TYPE
                ),
            }
            for m in g.members
        ],
        "authorized_operations": UNKNOWN_AUTHORIZED_OPERATIONS,
    }


def _kafka_assignor(name: str) -> str:
    """Kafka's name for the coordinator's assignor (``sticky`` serves Kafka's ``uniform``)."""
    return "uniform" if name == "sticky" else name


def _failed(
    group_id: str, code: int, message: str | None
) -> shapes.ConsumerGroupDescribeDescribedGroupShape:
    return {
        "error_code": code,
        "error_message": kafka_message(code, message),
        "group_id": group_id,
        "group_state": "Dead",
        "group_epoch": -1,
        "assignment_epoch": -1,
        "assignor_name": "",
        "members": [],
        "authorized_operations": UNKNOWN_AUTHORIZED_OPERATIONS,
    }


def translate_describe(
    schema: ApiSchema, req: shapes.ConsumerGroupDescribeRequests
) -> Forward[gm.DescribeGroupsResponse]:
    group_ids = [str(g) for g in req.group_ids]

    def respond(groups: list[shapes.ConsumerGroupDescribeDescribedGroupShape]) -> KafkaResponse:
        return build(schema.response_type, {"groups": groups})

    def reply(resp: gm.DescribeGroupsResponse) -> KafkaResponse:
        return respond([_group(g) for g in resp.groups])

    def fail(code: int) -> KafkaResponse:
        return respond([_failed(gid, code, None) for gid in group_ids])

    return Forward(gm.DescribeGroupsRequest(group_ids), reply, fail)
