"""DeleteGroups: removing empty consumer groups and their committed offsets.

Served by the group coordinator (the node running the controller; NOT_COORDINATOR elsewhere,
as for the other group apis). The decision and its per-group errors come from
``metadata_quorum.group_deletion``; the answer is sent once the deletions are committed.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.controller_calls import decide_on_controller
from rillet.metadata_quorum.controller import Controller
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.group_deletion import DeletionResult, decide_deletions
from rillet.metadata_quorum.state import MetadataState
from rillet.wire import group_messages as gm
from rillet.wire.error_codes import ErrorCode

AsyncAnswer = Coroutine[Any, Any, Any]


def handle_delete_groups(
    ctx: BrokerContext, req: gm.DeleteGroupsRequest
) -> gm.DeleteGroupsResponse | AsyncAnswer:
    if not ctx.metadata.controller_is_local():
        return _all(req, ErrorCode.NOT_COORDINATOR, "this node is not the group coordinator")
    return _delete(ctx, req)


async def _delete(ctx: BrokerContext, req: gm.DeleteGroupsRequest) -> gm.DeleteGroupsResponse:
    results: list[DeletionResult] = []

    def decide(ctl: Controller, s: MetadataState, now: int) -> Decision:
        decided, records = decide_deletions(s, req.group_ids, ctl.classic_groups.joining)
        results[:] = decided
        return Decision(list(records))

    outcome = await decide_on_controller(ctx, decide)
    if outcome.error != ErrorCode.NONE:
        code = outcome.error
        if code in (ErrorCode.NOT_CONTROLLER, ErrorCode.REQUEST_TIMED_OUT):
            code = ErrorCode.NOT_COORDINATOR  # the client finds the coordinator and retries
        return _all(req, code, outcome.message)
    return gm.DeleteGroupsResponse(
        [gm.DeletedGroup(r.group_id, r.error, r.message) for r in results]
    )


def _all(
    req: gm.DeleteGroupsRequest, code: ErrorCode, message: str | None
) -> gm.DeleteGroupsResponse:
    ids = dict.fromkeys(req.group_ids)
    return gm.DeleteGroupsResponse([gm.DeletedGroup(g, code, message) for g in ids])
