"""The cluster's feature level: described by any node, raised by the controller.

A description comes from the node's own metadata view (the level in force, what this node
supports, and per registered node what its registration states); the controller's answer
also counts what it heard in heartbeats. A raise is forwarded once to the controller and
decided there (``metadata_quorum/feature_decisions.py``).
"""

from __future__ import annotations

from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.controller_calls import decide_on_controller, forward_once
from rillet.broker.handlers.deferred import Deferred
from rillet.metadata_quorum.controller import Controller
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.features import BASE_LEVEL, FEATURE_NAME, LATEST_LEVEL
from rillet.metadata_quorum.state import MetadataState
from rillet.wire.error_codes import ErrorCode
from rillet.wire.feature_messages import (
    NodeFeatureLevel,
    UpdateFeaturesRequest,
    UpdateFeaturesResponse,
)


def describe(ctx: BrokerContext, error: ErrorCode, message: str | None) -> UpdateFeaturesResponse:
    state = ctx.metadata.state
    controller = ctx.metadata.controller
    levels = controller.feature_levels(state) if controller is not None else None
    if levels is None:
        levels = {b: state.broker_max_levels.get(b, BASE_LEVEL) for b in sorted(state.brokers)}
    return UpdateFeaturesResponse(
        error,
        message,
        FEATURE_NAME,
        state.feature_level,
        BASE_LEVEL,
        LATEST_LEVEL,
        [NodeFeatureLevel(b, level) for b, level in levels.items()],
    )


def handle_update_features(
    ctx: BrokerContext, req: UpdateFeaturesRequest
) -> UpdateFeaturesResponse | Deferred[UpdateFeaturesResponse]:
    if req.level <= 0:
        return describe(ctx, ErrorCode.NONE, None)
    return _raise(ctx, req)


async def _raise(ctx: BrokerContext, req: UpdateFeaturesRequest) -> UpdateFeaturesResponse:
    if not ctx.metadata.controller_is_local() and not req.forwarded:
        return await forward_once(
            ctx,
            req,
            lambda why: UpdateFeaturesResponse(ErrorCode.NOT_CONTROLLER, why),
            lambda r: -1 if r.error_code == ErrorCode.NOT_CONTROLLER else None,
        )
    name = req.name or FEATURE_NAME

    def decide(ctl: Controller, state: MetadataState, now_ms: int) -> Decision:
        return ctl.features.raise_level(state, name, req.level, req.validate_only)

    outcome = await decide_on_controller(ctx, decide)
    if outcome.error == ErrorCode.NONE and outcome.decision and outcome.decision.records:
        await ctx.metadata.wait_hosted(ctx.metadata.applied_offset)
    return describe(ctx, outcome.error, outcome.message)
