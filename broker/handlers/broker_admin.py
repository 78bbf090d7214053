"""Dynamic broker configs and UnregisterBroker: decided by the controller, sent to any node.

A node that is not the controller forwards the request once; the controller checks it
against the committed state (metadata_quorum/broker_admin.py) and commits one entry. The
only dynamic broker settings are Kafka's replication throttle rates; any other name is
INVALID_CONFIG naming it (the rest of a node's settings live in its node.toml).
"""

from __future__ import annotations

import logging

from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.controller_calls import decide_on_controller, forward_once
from rillet.broker.replica.replication.replication_throttle import (
    BROKER_THROTTLE_CONFIGS,
    ThrottleConfigError,
    parse_rate,
)
from rillet.metadata_quorum import broker_admin
from rillet.metadata_quorum.controller import Controller
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.state import MetadataState
from rillet.wire.broker_admin_messages import (
    AlterBrokerConfigsRequest,
    AlterBrokerConfigsResponse,
    BrokerConfigChange,
    BrokerConfigResult,
    UnregisterBrokerRequest,
    UnregisterBrokerResponse,
)
from rillet.wire.error_codes import ErrorCode

log = logging.getLogger(__name__)


def new_broker_configs(current: dict[str, str], change: BrokerConfigChange) -> dict[str, str]:
    """The broker's settings after ``change``, validated; raises ThrottleConfigError."""
    out = {} if change.replace else dict(current)
    for key in change.delete:
        out.pop(key, None)
    for key, value in change.set.items():
        if key not in BROKER_THROTTLE_CONFIGS:
            raise ThrottleConfigError(
                f"{key} cannot change at run time (dynamic broker settings: "
                f"{', '.join(BROKER_THROTTLE_CONFIGS)}; the others live in node.toml)"
            )
        out[key] = str(parse_rate(key, value))
    return out


async def handle_alter_broker_configs(
    ctx: BrokerContext, req: AlterBrokerConfigsRequest
) -> AlterBrokerConfigsResponse:
    if not ctx.metadata.controller_is_local() and not req.forwarded:
        return await forward_once(
            ctx,
            req,
            lambda why: AlterBrokerConfigsResponse(
                [
                    BrokerConfigResult(c.broker_id, ErrorCode.NOT_CONTROLLER, why)
                    for c in req.changes
                ]
            ),
            lambda r: (
                -1 if any(x.error_code == ErrorCode.NOT_CONTROLLER for x in r.results) else None
            ),
        )
    results = []
    for change in req.changes:

        def decide(
            ctl: Controller, state: MetadataState, now_ms: int, change: BrokerConfigChange = change
        ) -> Decision:
            try:
                configs = new_broker_configs(state.broker_configs.get(change.broker_id, {}), change)
            except ThrottleConfigError as exc:
                return Decision([], ErrorCode.INVALID_CONFIG, str(exc))
            if req.validate_only:
                return Decision([])
            return broker_admin.alter_broker_configs(state, change.broker_id, configs)

        outcome = await decide_on_controller(ctx, decide)
        if outcome.error == ErrorCode.NONE and outcome.decision and outcome.decision.records:
            log.info("broker %d: dynamic configs changed (%s)", change.broker_id, change)
            await ctx.metadata.wait_hosted(ctx.metadata.applied_offset)
        results.append(BrokerConfigResult(change.broker_id, outcome.error, outcome.message))
    return AlterBrokerConfigsResponse(results)


async def handle_unregister_broker(
    ctx: BrokerContext, req: UnregisterBrokerRequest
) -> UnregisterBrokerResponse:
    if not ctx.metadata.controller_is_local() and not req.forwarded:
        return await forward_once(
            ctx,
            req,
            lambda why: UnregisterBrokerResponse(ErrorCode.NOT_CONTROLLER, why),
            lambda r: -1 if r.error_code == ErrorCode.NOT_CONTROLLER else None,
        )
    outcome = await decide_on_controller(
        ctx, lambda ctl, state, now_ms: broker_admin.unregister_broker(state, req.broker_id)
    )
    if outcome.error == ErrorCode.NONE:
        log.info("broker %d unregistered", req.broker_id)
        await ctx.metadata.wait_hosted(ctx.metadata.applied_offset)
    return UnregisterBrokerResponse(outcome.error, outcome.message)
