"""FindCoordinator v0-v4 on the Kafka listener: v3 is v2 made flexible, v4 batches keys and
answers each (requests and answers through kafka-python's classes)."""

from __future__ import annotations

import pytest
from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse
from kafka_front_end import StaticView, forwarded, received

from rillet.broker.kafka.codec import encode_response
from rillet.broker.kafka.front_end import translate
from rillet.broker.kafka.translation import Answer, KafkaEndpoint
from rillet.wire import group_messages as gm
from rillet.wire.error_codes import ErrorCode

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
VIEW = StaticView({2: KafkaEndpoint(2, "h2", 19093, None)})


def _decoded(schema: object, response: object, version: int) -> FindCoordinatorResponse:
    data = encode_response(5, schema, response)  # type: ignore[arg-type]
    return FindCoordinatorResponse.decode(data, version=version, header=True, framed=True)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_one_key_per_request_up_to_v3(version: int) -> None:
    request = FindCoordinatorRequest(key="g", key_type=0)
    schema, action = forwarded(request, version, VIEW)
    assert action.native == gm.FindCoordinatorRequest("g", 0, [])
    decoded = _decoded(schema, action.reply(gm.FindCoordinatorResponse(0, 2, "x", 1)), version)
    assert (decoded.error_code, decoded.node_id, decoded.host, decoded.port) == (
        0,
        2,
        "h2",
        19093,
    )
    decoded = _decoded(schema, action.reply(gm.FindCoordinatorResponse(0, 9, "x", 1)), version)
    assert decoded.error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE
    if version >= 1:
        assert decoded.error_message == "the coordinator, node 9, has no Kafka listener"


def test_v4_batches_keys_and_answers_each() -> None:
    request = FindCoordinatorRequest(key_type=0, coordinator_keys=["a", "b", "c"])
    schema, action = forwarded(request, 4, VIEW)
    assert action.native == gm.FindCoordinatorRequest("a", 0, ["b", "c"])
    decoded = _decoded(schema, action.reply(gm.FindCoordinatorResponse(0, 2, "x", 1)), 4)
    assert [(c.key, c.node_id, c.host, c.port, c.error_code) for c in decoded.coordinators] == [
        (k, 2, "h2", 19093, 0) for k in "abc"
    ]
    decoded = _decoded(schema, action.fail(ErrorCode.GROUP_AUTHORIZATION_FAILED), 4)
    assert {(c.error_code, c.error_message) for c in decoded.coordinators} == {
        (30, "not authorized to describe every group named")
    }
    none = FindCoordinatorRequest(key_type=0, coordinator_keys=[])
    _h, schema, entity = received(none, 4)
    answer = translate(schema, entity, VIEW)
    assert isinstance(answer, Answer)
    assert _decoded(schema, answer.response, 4).coordinators == []
