"""The typed reads of version-dependent request fields, and a Forward's check that the
dispatcher's answer is the response its native request names."""

from __future__ import annotations

import pytest
from kio.schema.find_coordinator.v0.request import FindCoordinatorRequest as FindCoordinatorV0
from kio.schema.find_coordinator.v1.request import FindCoordinatorRequest as FindCoordinatorV1
from kio.schema.join_group.v4.request import JoinGroupRequest as JoinGroupV4
from kio.schema.join_group.v5.request import JoinGroupRequest as JoinGroupV5

from rillet.broker.kafka.translation import Forward, RawBody, field_or, optional_field
from rillet.wire import group_messages as gm
from rillet.wire.error_codes import ErrorCode


def test_a_field_older_versions_lack_reads_as_its_default() -> None:
    assert field_or(FindCoordinatorV0(key="g"), "key_type", 0) == 0
    assert field_or(FindCoordinatorV1(key="g", key_type=1), "key_type", 0) == 1


def test_a_field_of_another_type_is_refused() -> None:
    with pytest.raises(TypeError, match="key"):
        field_or(FindCoordinatorV0(key="g"), "key", 0)


def test_an_optional_field_is_none_where_absent_or_null() -> None:
    join = {
        "group_id": "g",
        "session_timeout": 10_000,
        "rebalance_timeout": 10_000,
        "member_id": "",
        "protocol_type": "consumer",
        "protocols": (),
    }
    assert optional_field(JoinGroupV4(**join), "group_instance_id", str) is None
    assert (
        optional_field(JoinGroupV5(**join, group_instance_id=None), "group_instance_id", str)
        is None
    )
    assert (
        optional_field(JoinGroupV5(**join, group_instance_id="i"), "group_instance_id", str) == "i"
    )


def test_an_answer_of_another_response_type_is_refused() -> None:
    forward = Forward(
        gm.FindCoordinatorRequest("g", 0),
        lambda resp: RawBody([str(resp.node_id).encode()]),
        lambda code: RawBody([]),
    )
    assert forward.answer(gm.FindCoordinatorResponse(ErrorCode.NONE, 3)) == RawBody([b"3"])
    with pytest.raises(TypeError, match="LeaveGroupResponse"):
        forward.answer(gm.LeaveGroupResponse(ErrorCode.NONE))
