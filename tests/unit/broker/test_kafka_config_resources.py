"""ListConfigResources (74): resources with settings, by type, from the node's state
(topics as Metadata lists them, groups as ListGroups does, brokers from the live ones)."""

from __future__ import annotations

from typing import Any

import pytest
from kafka.protocol.admin import ListConfigResourcesRequest, ListConfigResourcesResponse
from kafka_front_end import StaticView, received

from rillet.broker.kafka.codec import encode_response
from rillet.broker.kafka.front_end import translate
from rillet.broker.kafka.translation import Answer, Forward, KafkaEndpoint
from rillet.wire import classic_group_messages as cgm
from rillet.wire import messages as m

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
VIEW = StaticView({1: KafkaEndpoint(1, "h", 1, None), 3: KafkaEndpoint(3, "h", 3, None)})


def _ask(types: list[int], version: int = 1) -> tuple[Any, Forward | Answer]:
    request = ListConfigResourcesRequest(resource_types=types) if version else None
    request = request or ListConfigResourcesRequest()
    _h, schema, entity = received(request, version)
    return schema, translate(schema, entity, VIEW)


def _listed(schema: Any, response: Any) -> list[tuple[str, int]]:
    decoded = ListConfigResourcesResponse.decode(
        encode_response(1, schema, response), version=schema.version, header=True, framed=True
    )
    assert decoded.error_code == 0
    if schema.version == 0:
        return [(r.resource_name, 16) for r in decoded.config_resources]
    return [(r.resource_name, r.resource_type) for r in decoded.config_resources]


def test_brokers_come_from_the_view_and_client_metrics_are_none() -> None:
    schema, action = _ask([4, 16])
    assert isinstance(action, Answer)
    assert _listed(schema, action.response) == [("1", 4), ("3", 4)]
    schema, action = _ask([], version=0)
    assert isinstance(action, Answer) and _listed(schema, action.response) == []


def test_topics_come_from_metadata_and_groups_from_list_groups() -> None:
    schema, action = _ask([2])
    assert isinstance(action, Forward) and action.native == m.MetadataRequest(None, -1, False)
    answer = m.MetadataResponse(
        "c",
        1,
        [],
        [m.TopicMetadata("b", 0, []), m.TopicMetadata("a", 0, []), m.TopicMetadata("x", 29, [])],
    )
    assert _listed(schema, action.reply(answer)) == [("a", 2), ("b", 2)]
    schema, action = _ask([32, 4])
    assert isinstance(action, Forward) and isinstance(action.native, cgm.ClassicListGroupsRequest)
    groups = cgm.ClassicListGroupsResponse(
        0,
        [
            cgm.ClassicListedGroup("g2", "consumer", "Stable"),
            cgm.ClassicListedGroup("g1", "", "Empty"),
        ],
    )
    assert _listed(schema, action.reply(groups)) == [("1", 4), ("3", 4), ("g1", 32), ("g2", 32)]


def test_an_unknown_type_is_an_invalid_request() -> None:
    schema, action = _ask([99])
    assert isinstance(action, Answer)
    decoded = ListConfigResourcesResponse.decode(
        encode_response(1, schema, action.response), version=1, header=True, framed=True
    )
    assert decoded.error_code == 42
