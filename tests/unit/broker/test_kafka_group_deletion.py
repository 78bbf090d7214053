"""Kafka's DeleteGroups through the listener's codec, against kafka-python's classes."""

from __future__ import annotations

from typing import Any

import pytest
from kafka.protocol.admin.groups import DeleteGroupsRequest, DeleteGroupsResponse
from kafka_front_end import forwarded

from rillet.broker.kafka.codec import encode_response
from rillet.wire import group_messages as gm
from rillet.wire.error_codes import ErrorCode

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def answered(schema: Any, response: Any) -> Any:
    data = encode_response(4, schema, response)
    return DeleteGroupsResponse.decode(data, version=schema.version, header=True, framed=True)


@pytest.mark.parametrize("version", [0, 1])
def test_delete_groups_in_every_version(version: int) -> None:
    schema, action = forwarded(DeleteGroupsRequest(groups_names=["a", "b", "a", "c"]), version)
    assert action.native == gm.DeleteGroupsRequest(["a", "b", "c"])
    response = gm.DeleteGroupsResponse(
        [
            gm.DeletedGroup("a", ErrorCode.NONE),
            gm.DeletedGroup("b", ErrorCode.GROUP_NOT_EMPTY, "busy"),
            gm.DeletedGroup("c", ErrorCode.GROUP_ID_NOT_FOUND),
        ]
    )
    decoded = answered(schema, action.reply(response))
    assert [(r.group_id, r.error_code) for r in decoded.results] == [
        ("a", 0),
        ("b", 68),
        ("c", 69),
    ]
    failed = answered(schema, action.fail(ErrorCode.NOT_COORDINATOR))
    assert [r.error_code for r in failed.results] == [16, 16, 16]
