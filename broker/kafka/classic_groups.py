"""JoinGroup, SyncGroup, Heartbeat, LeaveGroup, DescribeGroups and ListGroups onto the
classic group coordinator's internal requests, which are Kafka-shaped field for field.

JoinGroup v4+ asks for the two-step join (MEMBER_ID_REQUIRED, then join again with the id
given); v0 has no rebalance timeout, so the session timeout stands in for it, as in Kafka.
"""

from __future__ import annotations

import datetime

from rillet.broker.kafka import shapes
from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.translation import (
    Caller,
    Forward,
    KafkaResponse,
    millis,
    optional_field,
)
from rillet.wire import classic_group_messages as cgm

UNKNOWN_AUTHORIZED_OPERATIONS = -(2**31)


def _instance_id(req: object) -> str | None:
    """The static member's id (v5+ of the apis that have it)."""
    return optional_field(req, "group_instance_id", str)


def translate_join_group(
    schema: ApiSchema, req: shapes.JoinGroupRequests, caller: Caller
) -> Forward[cgm.ClassicJoinGroupResponse]:
    session_ms = millis(req.session_timeout)
    rebalance = optional_field(req, "rebalance_timeout", datetime.timedelta)
    native = cgm.ClassicJoinGroupRequest(
        str(req.group_id),
        session_ms,
        session_ms if rebalance is None else millis(rebalance),
        str(req.member_id),
        _instance_id(req),
        str(req.protocol_type),
        [cgm.ClassicProtocol(str(p.name), bytes(p.metadata)) for p in req.protocols],
        caller.client_id or "",
        caller.client_host,
        require_known_member_id=schema.version >= 4,
    )

    def respond(resp: cgm.ClassicJoinGroupResponse) -> KafkaResponse:
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "error_code": resp.error_code,
                "generation_id": resp.generation_id,
                "protocol_name": resp.protocol_name or "",
                "leader": resp.leader_id,
                "member_id": resp.member_id,
                "members": [
                    {
                        "member_id": m.member_id,
                        "group_instance_id": m.group_instance_id,
                        "metadata": m.metadata,
                    }
                    for m in resp.members
                ],
            },
        )

    return Forward(native, respond, lambda code: respond(cgm.ClassicJoinGroupResponse(code)))


def translate_sync_group(
    schema: ApiSchema, req: shapes.SyncGroupRequests
) -> Forward[cgm.ClassicSyncGroupResponse]:
    native = cgm.ClassicSyncGroupRequest(
        str(req.group_id),
        int(req.generation_id),
        str(req.member_id),
        _instance_id(req),
        assignments=[
            cgm.ClassicMemberAssignment(str(a.member_id), bytes(a.assignment))
            for a in req.assignments
        ],
    )

    def respond(code: int, assignment: bytes = b"") -> KafkaResponse:
        return build(
            schema.response_type,
            {"throttle_time": 0, "error_code": code, "assignment": assignment},
        )

    def reply(resp: cgm.ClassicSyncGroupResponse) -> KafkaResponse:
        return respond(resp.error_code, resp.assignment)

    return Forward(native, reply, respond)


def translate_heartbeat(
    schema: ApiSchema, req: shapes.HeartbeatRequests
) -> Forward[cgm.ClassicHeartbeatResponse]:
    native = cgm.ClassicHeartbeatRequest(
        str(req.group_id),
        int(req.generation_id),
        str(req.member_id),
        _instance_id(req),
    )

    def respond(code: int) -> KafkaResponse:
        return build(schema.response_type, {"throttle_time": 0, "error_code": code})

    return Forward(native, lambda resp: respond(resp.error_code), respond)


def translate_leave_group(
    schema: ApiSchema, req: shapes.LeaveGroupRequests
) -> Forward[cgm.ClassicLeaveGroupResponse]:
    native = cgm.ClassicLeaveGroupRequest(
        str(req.group_id), [cgm.ClassicLeavingMember(str(req.member_id))]
    )

    def respond(code: int) -> KafkaResponse:
        return build(schema.response_type, {"throttle_time": 0, "error_code": code})

    def reply(resp: cgm.ClassicLeaveGroupResponse) -> KafkaResponse:
        # v0-v2 name one member: its own error is the answer when the request went through.
        code = resp.error_code or next((m.error_code for m in resp.members), 0)
        return respond(code)

    return Forward(native, reply, respond)


def translate_describe_groups(
    schema: ApiSchema, req: shapes.DescribeGroupsRequests
) -> Forward[cgm.ClassicDescribeGroupsResponse]:
    group_ids = [str(g) for g in req.groups]

    def respond(groups: list[shapes.DescribeGroupsDescribedGroupShape]) -> KafkaResponse:
        return build(schema.response_type, {"throttle_time": 0, "groups": groups})

    def reply(resp: cgm.ClassicDescribeGroupsResponse) -> KafkaResponse:
        return respond(
            [
                {
                    "error_code": g.error_code,
                    "group_id": g.group_id,
                    "group_state": g.group_state,
                    "protocol_type": g.protocol_type,
                    "protocol_data": g.protocol_data,
                    "members": [
                        {
                            "member_id": m.member_id,
                            "group_instance_id": m.group_instance_id,
                            "client_id": m.client_id,
                            "client_host": m.client_host,
                            "member_metadata": m.member_metadata,
                            "member_assignment": m.member_assignment,
                        }
                        for m in g.members
                    ],
                    "authorized_operations": UNKNOWN_AUTHORIZED_OPERATIONS,
                }
                for g in resp.groups
            ]
        )

    def fail(code: int) -> KafkaResponse:
        return respond(
            [
                {
                    "error_code": code,
                    "group_id": gid,
                    "group_state": "",
                    "protocol_type": "",
                    "protocol_data": "",
                    "members": [],
                    "authorized_operations": UNKNOWN_AUTHORIZED_OPERATIONS,
                }
                for gid in group_ids
            ]
        )

    return Forward(cgm.ClassicDescribeGroupsRequest(group_ids), reply, fail)


def translate_list_groups(
    schema: ApiSchema, req: shapes.ListGroupsRequests
) -> Forward[cgm.ClassicListGroupsResponse]:
    def respond(code: int, groups: list[cgm.ClassicListedGroup]) -> KafkaResponse:
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "error_code": code,
                "groups": [
                    {"group_id": g.group_id, "protocol_type": g.protocol_type} for g in groups
                ],
            },
        )

    def reply(resp: cgm.ClassicListGroupsResponse) -> KafkaResponse:
        return respond(resp.error_code, resp.groups)

    return Forward(cgm.ClassicListGroupsRequest(), reply, lambda code: respond(code, []))
