"""Running a decision on this node's controller and mapping the outcome to error codes.

Shared by the cluster apis and topic administration: NotLeaderError becomes NOT_CONTROLLER
(with the leader as hint), a proposal whose fate is unknown after a leadership change becomes
REQUEST_TIMED_OUT (callers retry; decisions are idempotent against the committed state).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TypeVar

from rillet.broker.errors import BrokerError
from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.controller_decisions import NOT_ACTIVE, ControllerOutcome, decided
from rillet.metadata_quorum.controller_service import DecideFn
from rillet.raft.errors import NotLeaderError, RaftError
from rillet.wire.error_codes import ErrorCode
from rillet.wire.request import Request


async def decide_on_controller(
    ctx: BrokerContext, decide: DecideFn, commuting: bool = False
) -> ControllerOutcome:
    """Run ``decide`` on this node's controller; ``commuting`` decisions (offset commits) are
    committed in batches with others of their kind."""
    controller = ctx.metadata.controller
    if controller is None or not controller.active:
        return NOT_ACTIVE
    try:
        if commuting:
            decision = await controller.submit_commuting(decide)
        else:
            decision = await controller.submit(decide)
    except NotLeaderError:
        return ControllerOutcome(ErrorCode.NOT_CONTROLLER, "leadership moved")
    except RaftError as exc:
        return ControllerOutcome(ErrorCode.REQUEST_TIMED_OUT, f"metadata commit failed: {exc}")
    return decided(decision)


def refused_auth(ctx: BrokerContext, cluster_id: str, auth: bytes) -> str | None:
    return ctx.metadata.auth.check(cluster_id, auth)


R = TypeVar("R")


def _forwarded(request: Request[R]) -> Request[R]:
    """``request`` marked as forwarded: every forwardable request is a dataclass with a
    ``forwarded`` flag (TypeError for any other)."""
    plain: object = request
    if dataclasses.is_dataclass(plain) and not isinstance(plain, type):
        marked = dataclasses.replace(plain, forwarded=True)
        if isinstance(marked, type(request)):
            return marked
    raise TypeError(f"{type(request).__name__} cannot be forwarded")


async def forward_once(
    ctx: BrokerContext,
    request: Request[R],
    refused: Callable[[str], R],
    not_controller: Callable[[R], int | None],
) -> R:
    """Send a change that needs the controller there (Kafka clients send such apis to any
    broker), marked ``forwarded`` so it is not forwarded again. ``refused`` builds the
    NOT_CONTROLLER answer when no controller can be reached; ``not_controller`` tells the
    link which answers mean "try the next controller"."""
    link = ctx.metadata.link
    if link is None:
        return refused("no controller link")
    try:
        response: R = await link.call(
            _forwarded(request),
            ctx.config.quorum.request_timeout_ms / 1000,
            not_controller=not_controller,
        )
    except BrokerError as exc:
        return refused(str(exc))
    return response
