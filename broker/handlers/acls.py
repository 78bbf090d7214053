"""ACLs: created and deleted on the controller, described from any node.

A change is decided by the controller (a node that is not the controller forwards it there,
once), all of a request in one metadata entry, so every node's authorizer sees it at the
same log offset. A deletion's filters are matched against the ACLs the controller holds
when it decides, and the answer lists what each filter removed. On a node without an
authorizer the three apis answer SECURITY_DISABLED, as Kafka's do.
"""

from __future__ import annotations

from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.controller_calls import decide_on_controller, forward_once
from rillet.metadata_quorum.controller import Controller
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.state import MetadataState
from rillet.wire.acl_messages import (
    AclOutcome,
    CreateAclsRequest,
    CreateAclsResponse,
    DeleteAclsRequest,
    DeleteAclsResponse,
    DeletedAcls,
    DescribeAclsRequest,
    DescribeAclsResponse,
)
from rillet.wire.acls import AclBinding
from rillet.wire.error_codes import ErrorCode

NO_AUTHORIZER = "this cluster runs without an authorizer ([authorizer] enabled = false)"
MAX_ACLS = 100_000  # the cluster's ACLs, all together: a bound on every node's memory


async def handle_create_acls(ctx: BrokerContext, req: CreateAclsRequest) -> CreateAclsResponse:
    def every(code: ErrorCode, message: str | None) -> CreateAclsResponse:
        return CreateAclsResponse([AclOutcome(code, message) for _ in req.creations])

    if not ctx.config.authorizer.enabled:
        return every(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
    reasons = [b.invalid_reason() for b in req.creations]
    valid = [b for b, why in zip(req.creations, reasons, strict=True) if why is None]
    if not ctx.metadata.controller_is_local() and not req.forwarded:
        if not valid:
            return CreateAclsResponse([AclOutcome(ErrorCode.INVALID_REQUEST, r) for r in reasons])
        return await forward_once(
            ctx,
            req,
            lambda why: every(ErrorCode.NOT_CONTROLLER, why),
            lambda r: -1 if _not_controller(r.results) else None,
        )

    def decide(ctl: Controller, state: MetadataState, now_ms: int) -> Decision:
        if len(state.acls) + len(valid) > MAX_ACLS:
            return Decision([], ErrorCode.INVALID_REQUEST, f"more than {MAX_ACLS} ACLs")
        return ctl.alter_acls(state, valid, [])

    outcome = await decide_on_controller(ctx, decide) if valid else None
    results = []
    for why in reasons:
        if why is not None:
            results.append(AclOutcome(ErrorCode.INVALID_REQUEST, why))
        elif outcome is not None and outcome.error != ErrorCode.NONE:
            results.append(AclOutcome(outcome.error, outcome.message))
        else:
            results.append(AclOutcome(ErrorCode.NONE))
    return CreateAclsResponse(results)


async def handle_delete_acls(ctx: BrokerContext, req: DeleteAclsRequest) -> DeleteAclsResponse:
    def every(code: ErrorCode, message: str | None) -> DeleteAclsResponse:
        return DeleteAclsResponse([DeletedAcls(code, message, []) for _ in req.filters])

    if not ctx.config.authorizer.enabled:
        return every(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
    if not ctx.metadata.controller_is_local() and not req.forwarded:
        return await forward_once(
            ctx,
            req,
            lambda why: every(ErrorCode.NOT_CONTROLLER, why),
            lambda r: -1 if _not_controller(r.results) else None,
        )
    matched: list[list[AclBinding]] = []

    def decide(ctl: Controller, state: MetadataState, now_ms: int) -> Decision:
        matched[:] = [state.acls.selected(f) for f in req.filters]
        return ctl.alter_acls(state, [], [b for bindings in matched for b in bindings])

    outcome = await decide_on_controller(ctx, decide)
    if outcome.error != ErrorCode.NONE:
        return every(outcome.error, outcome.message)
    return DeleteAclsResponse([DeletedAcls(ErrorCode.NONE, None, b) for b in matched])


def handle_describe_acls(ctx: BrokerContext, req: DescribeAclsRequest) -> DescribeAclsResponse:
    if not ctx.config.authorizer.enabled:
        return DescribeAclsResponse(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER, [])
    return DescribeAclsResponse(ErrorCode.NONE, None, ctx.metadata.state.acls.selected(req.filter))


def _not_controller(results: list[AclOutcome] | list[DeletedAcls]) -> bool:
    return any(r.error_code == ErrorCode.NOT_CONTROLLER for r in results)
