"""DeleteGroups and OffsetDelete: removing empty consumer groups with their committed
offsets, or some offsets of a group.

Served by the group coordinator (the node running the controller; NOT_COORDINATOR elsewhere,
as for the other group apis). The decisions and their errors come from
``metadata_quorum.group_deletion`` and ``metadata_quorum.group_offset_deletion``; the answer
is sent once the deletion is committed.
"""

from __future__ import annotations

from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.controller_calls import decide_on_controller
from rillet.broker.handlers.deferred import Deferred
from rillet.metadata_quorum.controller import Controller
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.group_deletion import DeletionResult, decide_deletions
from rillet.metadata_quorum.group_offset_deletion import OffsetDeletion, decide_offset_deletion
from rillet.metadata_quorum.state import MetadataState
from rillet.wire import group_messages as gm
from rillet.wire.error_codes import ErrorCode


def handle_delete_groups(
    ctx: BrokerContext, req: gm.DeleteGroupsRequest
) -> gm.DeleteGroupsResponse | Deferred[gm.DeleteGroupsResponse]:
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
        return _all(req, _as_coordinator(outcome.error), outcome.message)
    return gm.DeleteGroupsResponse(
        [gm.DeletedGroup(r.group_id, r.error, r.message) for r in results]
    )


def _all(
    req: gm.DeleteGroupsRequest, code: ErrorCode, message: str | None
) -> gm.DeleteGroupsResponse:
    ids = dict.fromkeys(req.group_ids)
    return gm.DeleteGroupsResponse([gm.DeletedGroup(g, code, message) for g in ids])


def _as_coordinator(code: ErrorCode) -> ErrorCode:
    """The controller's failure as a group coordinator says it: the client finds the
    coordinator again and retries."""
    if code in (ErrorCode.NOT_CONTROLLER, ErrorCode.REQUEST_TIMED_OUT):
        return ErrorCode.NOT_COORDINATOR
    return code


def handle_delete_group_offsets(
    ctx: BrokerContext, req: gm.DeleteGroupOffsetsRequest
) -> gm.DeleteGroupOffsetsResponse | Deferred[gm.DeleteGroupOffsetsResponse]:
    if not ctx.metadata.controller_is_local():
        return gm.DeleteGroupOffsetsResponse(
            ErrorCode.NOT_COORDINATOR, error_message="this node is not the group coordinator"
        )
    return _delete_offsets(ctx, req)


async def _delete_offsets(
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
        code = _as_coordinator(outcome.error)
        return gm.DeleteGroupOffsetsResponse(code, error_message=outcome.message)
    (result,) = decided
    return gm.DeleteGroupOffsetsResponse(
        ErrorCode.NONE,
        [gm.PartitionError(t, p, code) for (t, p), code in result.partitions.items()],
    )
