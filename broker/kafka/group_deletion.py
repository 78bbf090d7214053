"""Kafka's DeleteGroups (v0-1) onto the native DeleteGroups request: one result per group
named (GROUP_NOT_EMPTY while it has members, GROUP_ID_NOT_FOUND for a group rillet does
not know, NOT_COORDINATOR from a node that is not the coordinator)."""

from __future__ import annotations

from typing import Any

from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.translation import Forward
from rillet.wire import group_messages as gm


def translate_delete_groups(schema: ApiSchema, req: Any) -> Forward:
    names = list(dict.fromkeys(str(g) for g in req.groups_names))

    def respond(codes: dict[str, int]) -> Any:
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "results": [{"group_id": g, "error_code": codes[g]} for g in names],
            },
        )

    def reply(resp: gm.DeleteGroupsResponse) -> Any:
        codes = {r.group_id: r.error_code for r in resp.results}
        return respond({g: codes.get(g, 0) for g in names})

    def fail(code: int) -> Any:
        return respond(dict.fromkeys(names, code))

    return Forward(gm.DeleteGroupsRequest(names), reply, fail)
