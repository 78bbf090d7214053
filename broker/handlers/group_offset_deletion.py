"""OffsetDelete: removing some of a group's committed offsets.

Served by the group coordinator (the node running the controller; NOT_COORDINATOR elsewhere,
as for the other group apis). The decision and its per-partition errors come from
``metadata_quorum.group_offset_deletion``; the answer is sent once the deletion is committed.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.controller_calls import decide_on_controller
from rillet.metadata_quorum.controller import Controller
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.group_offset_deletion import OffsetDeletion, decide_offset_deletion
from rillet.metadata_quorum.state import MetadataState
from rillet.wire import group_messages as gm
from rillet.wire.error_codes import ErrorCode

AsyncAnswer = Coroutine[Any, Any, Any]


def handle_delete_group_offsets(
    ctx: BrokerContext, req: gm.DeleteGroupOffsetsRequest
) -> gm.DeleteGroupOffsetsResponse | AsyncAnswer:
    if not ctx.metadata.controller_is_local():
        return gm.DeleteGroupOffsetsResponse(
            ErrorCode.NOT_COORDINATOR, error_message="this node is not the group coordinator"
        )
    return _delete(ctx, req)


async def _delete(
    ctx: BrokerContext, req: gm.DeleteGroupOffsetsRequest
) -> gm.DeleteGroupOffsetsResponse:
    asked = [(t.topic, p) for t in req.partitions for p in t.partitions]
    decided: list[OffsetDeletion] = []

    def decide(ctl: Controller, s: MetadataState, now: int) -> Decision:
        result = decide_offset_deletion(s, req.group_id, asked)
        decided[:] = [result]
        if result.error != ErrorCode.NONE:
            return Decision([], result.error, result.message)
        return Decision([result.record] if result.record is not None else [])

    outcome = await decide_on_controller(ctx, decide)
    if outcome.error != ErrorCode.NONE:
        code = outcome.error
        if code in (ErrorCode.NOT_CONTROLLER, ErrorCode.REQUEST_TIMED_OUT):
            code = ErrorCode.NOT_COORDINATOR  # the client finds the coordinator and retries
        return gm.DeleteGroupOffsetsResponse(code, error_message=outcome.message)
    (result,) = decided
    return gm.DeleteGroupOffsetsResponse(
        ErrorCode.NONE,
        [gm.PartitionError(t, p, code) for (t, p), code in result.partitions.items()],
    )
