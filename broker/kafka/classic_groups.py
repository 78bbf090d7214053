"""JoinGroup, SyncGroup, Heartbeat, LeaveGroup, DescribeGroups and ListGroups onto the
classic group coordinator's internal requests, which are Kafka-shaped field for field.

JoinGroup v4+ asks for the two-step join (MEMBER_ID_REQUIRED, then join again with the id
given); v0 has no rebalance timeout, so the session timeout stands in for it, as in Kafka.
"""

from __future__ import annotations

from typing import Any

from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.translation import Caller, Forward, millis
from rillet.wire import classic_group_messages as cgm

UNKNOWN_AUTHORIZED_OPERATIONS = -(2**31)


def _optional(value: Any) -> str | None:
    return None if value is None else str(value)


def translate_join_group(schema: ApiSchema, req: Any, caller: Caller) -> Forward:
    session_ms = millis(req.session_timeout)
    rebalance = getattr(req, "rebalance_timeout", None)
    native = cgm.ClassicJoinGroupRequest(
        str(req.group_id),
        session_ms,
        session_ms if rebalance is None else millis(rebalance),
        str(req.member_id),
        _optional(getattr(req, "group_instance_id", None)),
        str(req.protocol_type),
        [cgm.ClassicProtocol(str(p.name), bytes(p.metadata)) for p in req.protocols],
        caller.client_id or "",
        caller.client_host,
        require_known_member_id=schema.version >= 4,
    )

    def respond(resp: cgm.ClassicJoinGroupResponse) -> Any:
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


def translate_sync_group(schema: ApiSchema, req: Any) -> Forward:
    native = cgm.ClassicSyncGroupRequest(
        str(req.group_id),
        int(req.generation_id),
        str(req.member_id),
        _optional(getattr(req, "group_instance_id", None)),
        assignments=[
            cgm.ClassicMemberAssignment(str(a.member_id), bytes(a.assignment))
            for a in req.assignments
        ],
    )

    def respond(code: int, assignment: bytes = b"") -> Any:
        return build(
            schema.response_type,
            {"throttle_time": 0, "error_code": code, "assignment": assignment},
        )

    def reply(resp: cgm.ClassicSyncGroupResponse) -> Any:
        return respond(resp.error_code, resp.assignment)

    return Forward(native, reply, respond)


def translate_heartbeat(schema: ApiSchema, req: Any) -> Forward:
    native = cgm.ClassicHeartbeatRequest(
        str(req.group_id),
        int(req.generation_id),
        str(req.member_id),
        _optional(getattr(req, "group_instance_id", None)),
    )

    def respond(code: int) -> Any:
        return build(schema.response_type, {"throttle_time": 0, "error_code": code})

    return Forward(native, lambda resp: respond(resp.error_code), respond)


def translate_leave_group(schema: ApiSchema, req: Any) -> Forward:
    native = cgm.ClassicLeaveGroupRequest(
        str(req.group_id), [cgm.ClassicLeavingMember(str(req.member_id))]
    )

    def respond(code: int) -> Any:
        return build(schema.response_type, {"throttle_time": 0, "error_code": code})

    def reply(resp: cgm.ClassicLeaveGroupResponse) -> Any:
        # v0-v2 name one member: its own error is the answer when the request went through.
        code = resp.error_code or next((m.error_code for m in resp.members), 0)
        return respond(code)

    return Forward(native, reply, respond)


def translate_describe_groups(schema: ApiSchema, req: Any) -> Forward:
    group_ids = [str(g) for g in req.groups]

    def respond(groups: list[dict[str, Any]]) -> Any:
        return build(schema.response_type, {"throttle_time": 0, "groups": groups})

    def reply(resp: cgm.ClassicDescribeGroupsResponse) -> Any:
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

    def fail(code: int) -> Any:
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


def translate_list_groups(schema: ApiSchema, req: Any) -> Forward:
    def respond(code: int, groups: list[cgm.ClassicListedGroup]) -> Any:
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

    def reply(resp: cgm.ClassicListGroupsResponse) -> Any:
        return respond(resp.error_code, resp.groups)

    return Forward(cgm.ClassicListGroupsRequest(), reply, lambda code: respond(code, []))
