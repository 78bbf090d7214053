"""Classic group apis and error numbers through the Kafka codec, against kafka-python."""

from __future__ import annotations

from typing import Any

import pytest
from kafka.protocol.admin.groups import (
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    ListGroupsRequest,
    ListGroupsResponse,
)
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kafka_front_end import forwarded

from rillet.broker.kafka.codec import encode_response
from rillet.broker.kafka.error_map import kafka_error
from rillet.wire import classic_group_messages as cgm
from rillet.wire.error_codes import ErrorCode

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def answered(schema: Any, response: Any, oracle: Any) -> Any:
    data = encode_response(4, schema, response)
    return oracle.decode(data, version=schema.version, header=True, framed=True)


def test_rillet_error_codes_keep_kafka_s_numbers() -> None:
    for code in ErrorCode:
        expected = 35 if code is ErrorCode.UNKNOWN_API else int(code)
        assert kafka_error(code).value == expected, code
    assert kafka_error(ErrorCode.NOT_LEADER_OR_FOLLOWER).name == "not_leader_or_follower"
    assert kafka_error(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION).value == 3
    assert kafka_error(53).value == 53  # Kafka-only codes pass through
    assert kafka_error(31_000).name == "unknown_server_error"


def test_join_group_in_every_version() -> None:
    r = JoinGroupRequest
    for version in range(6):
        request = r(
            group_id="g",
            session_timeout_ms=6000,
            rebalance_timeout_ms=9000,
            member_id="",
            group_instance_id="static-1" if version >= 5 else None,
            protocol_type="consumer",
            protocols=[r.JoinGroupRequestProtocol(name="range", metadata=b"\x00sub")],
        )
        schema, action = forwarded(request, version, client_host="10.1.2.3")
        assert action.native == cgm.ClassicJoinGroupRequest(
            "g",
            6000,
            9000 if version >= 1 else 6000,
            "",
            "static-1" if version >= 5 else None,
            "consumer",
            [cgm.ClassicProtocol("range", b"\x00sub")],
            "oracle",
            "10.1.2.3",
            require_known_member_id=version >= 4,
        )
        native = cgm.ClassicJoinGroupResponse(
            0, 3, "consumer", "range", "m1", "m1", [cgm.ClassicJoinedMember("m1", None, b"s")]
        )
        decoded = answered(schema, action.reply(native), JoinGroupResponse)
        assert (decoded.error_code, decoded.generation_id, decoded.leader) == (0, 3, "m1")
        assert (decoded.protocol_name, decoded.member_id) == ("range", "m1")
        assert [(m.member_id, bytes(m.metadata)) for m in decoded.members] == [("m1", b"s")]
        required = action.reply(cgm.ClassicJoinGroupResponse(79, member_id="m2"))
        assert answered(schema, required, JoinGroupResponse).error_code == 79


def test_sync_heartbeat_and_leave_in_every_version() -> None:
    for version in range(4):
        request = SyncGroupRequest(
            group_id="g",
            generation_id=3,
            member_id="m1",
            group_instance_id=None,
            assignments=[
                SyncGroupRequest.SyncGroupRequestAssignment(member_id="m1", assignment=b"a1")
            ],
        )
        schema, action = forwarded(request, version)
        assert action.native == cgm.ClassicSyncGroupRequest(
            "g", 3, "m1", None, assignments=[cgm.ClassicMemberAssignment("m1", b"a1")]
        )
        decoded = answered(
            schema,
            action.reply(cgm.ClassicSyncGroupResponse(0, assignment=b"a1")),
            SyncGroupResponse,
        )
        assert (decoded.error_code, bytes(decoded.assignment)) == (0, b"a1")
        request = HeartbeatRequest(group_id="g", generation_id=3, member_id="m1")
        schema, action = forwarded(request, version)
        assert action.native == cgm.ClassicHeartbeatRequest("g", 3, "m1")
        decoded = answered(
            schema, action.reply(cgm.ClassicHeartbeatResponse(27)), HeartbeatResponse
        )
        assert decoded.error_code == 27
    for version in range(2):
        schema, action = forwarded(LeaveGroupRequest(group_id="g", member_id="m1"), version)
        assert action.native == cgm.ClassicLeaveGroupRequest("g", [cgm.ClassicLeavingMember("m1")])
        left = cgm.ClassicLeaveGroupResponse(0, [cgm.ClassicLeftMember("m1", None, 25)])
        assert answered(schema, action.reply(left), LeaveGroupResponse).error_code == 25


def test_describe_and_list_groups_in_every_version() -> None:
    member = cgm.ClassicDescribedMember("m1", None, "app-1", "10.1.2.3", b"sub", b"asg")
    description = cgm.ClassicGroupDescription(0, "g", "Stable", "consumer", "range", [member])
    for version in range(5):
        schema, action = forwarded(DescribeGroupsRequest(groups=["g"]), version)
        assert action.native == cgm.ClassicDescribeGroupsRequest(["g"])
        decoded = answered(
            schema,
            action.reply(cgm.ClassicDescribeGroupsResponse([description])),
            DescribeGroupsResponse,
        )
        (group,) = decoded.groups
        assert (group.group_id, group.group_state, group.protocol_data) == ("g", "Stable", "range")
        (m,) = group.members
        assert (m.member_id, m.client_id, m.client_host) == ("m1", "app-1", "10.1.2.3")
        assert (bytes(m.member_metadata), bytes(m.member_assignment)) == (b"sub", b"asg")
    for version in range(3):
        schema, action = forwarded(ListGroupsRequest(), version)
        listed = cgm.ClassicListGroupsResponse(
            0, [cgm.ClassicListedGroup("g", "consumer", "Stable")]
        )
        decoded = answered(schema, action.reply(listed), ListGroupsResponse)
        assert [(g.group_id, g.protocol_type) for g in decoded.groups] == [("g", "consumer")]
