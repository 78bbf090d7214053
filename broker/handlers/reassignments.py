"""Partition reassignment and leader election: decided by the controller, sent to any node.

A change (AlterPartitionReassignments, ElectLeaders) is forwarded once to the controller by
a node that is not it, and decided there in one metadata entry; each partition is answered
on its own. ListPartitionReassignments is answered from the node's own metadata view. The
moves themselves are carried out by the controller's tick and the partition leaders (see
metadata_quorum/reassignment.py): the answer only says a move started.
"""

from __future__ import annotations

from collections.abc import Sequence

from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.controller_calls import decide_on_controller, forward_once
from rillet.metadata_quorum.controller import Controller
from rillet.metadata_quorum.controller_service import DecideFn
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.reassignment import MoveRequest, PartitionResult
from rillet.metadata_quorum.reassignment_decisions import (
    ElectionType,
    PerPartitionDecision,
    alter_reassignments,
    elect_leaders,
    list_reassignments,
)
from rillet.metadata_quorum.state import MetadataState
from rillet.wire.error_codes import ErrorCode
from rillet.wire.reassignment_messages import (
    AlterReassignmentsRequest,
    AlterReassignmentsResponse,
    ElectLeadersRequest,
    ElectLeadersResponse,
    ListReassignmentsRequest,
    ListReassignmentsResponse,
    PartitionOutcome,
    ReassignmentStatus,
    TopicPartitions,
)

# Partitions one request may name: a bound on the controller's work per decision.
MAX_PARTITIONS_PER_REQUEST = 10_000


def _outcomes(results: Sequence[PartitionResult]) -> list[PartitionOutcome]:
    return [PartitionOutcome(r.topic, r.partition, int(r.error), r.message) for r in results]


def _pairs(topics: list[TopicPartitions] | None) -> list[tuple[str, int]] | None:
    if topics is None:
        return None
    return [(t.topic, p) for t in topics for p in t.partitions]


async def _decided(
    ctx: BrokerContext, decide: DecideFn
) -> tuple[ErrorCode, str | None, list[PartitionOutcome]]:
    outcome = await decide_on_controller(ctx, decide)
    decision = outcome.decision
    if outcome.error != ErrorCode.NONE or not isinstance(decision, PerPartitionDecision):
        return outcome.error, outcome.message, []
    if decision.records:  # the client's next request, to this node, sees the change
        await ctx.metadata.wait_hosted(ctx.metadata.applied_offset)
    return ErrorCode.NONE, None, _outcomes(decision.results)


async def handle_alter_reassignments(
    ctx: BrokerContext, req: AlterReassignmentsRequest
) -> AlterReassignmentsResponse:
    if len(req.moves) > MAX_PARTITIONS_PER_REQUEST:
        return AlterReassignmentsResponse(
            ErrorCode.INVALID_REQUEST, f"more than {MAX_PARTITIONS_PER_REQUEST} partitions", []
        )
    if not ctx.metadata.controller_is_local() and not req.forwarded:
        return await forward_once(
            ctx,
            req,
            lambda why: AlterReassignmentsResponse(ErrorCode.NOT_CONTROLLER, why, []),
            lambda r: -1 if r.error_code == ErrorCode.NOT_CONTROLLER else None,
        )
    moves = [
        MoveRequest(m.topic, m.partition, None if m.replicas is None else tuple(m.replicas))
        for m in req.moves
    ]

    def decide(ctl: Controller, state: MetadataState, now_ms: int) -> Decision:
        return alter_reassignments(state, moves)

    error, message, results = await _decided(ctx, decide)
    return AlterReassignmentsResponse(error, message, results)


def handle_list_reassignments(
    ctx: BrokerContext, req: ListReassignmentsRequest
) -> ListReassignmentsResponse:
    moves = list_reassignments(ctx.metadata.state, _pairs(req.topics))
    return ListReassignmentsResponse(
        ErrorCode.NONE,
        [
            ReassignmentStatus(
                m.topic,
                m.partition,
                list(m.replicas),
                list(m.adding_replicas),
                list(m.removing_replicas),
            )
            for m in moves
        ],
    )


async def handle_elect_leaders(
    ctx: BrokerContext, req: ElectLeadersRequest
) -> ElectLeadersResponse:
    try:
        election = ElectionType(req.election_type)
    except ValueError:
        return ElectLeadersResponse(
            ErrorCode.INVALID_REQUEST, f"unknown election type {req.election_type}", []
        )
    asked = _pairs(req.topics)
    if asked is not None and len(asked) > MAX_PARTITIONS_PER_REQUEST:
        return ElectLeadersResponse(
            ErrorCode.INVALID_REQUEST, f"more than {MAX_PARTITIONS_PER_REQUEST} partitions", []
        )
    if not ctx.metadata.controller_is_local() and not req.forwarded:
        return await forward_once(
            ctx,
            req,
            lambda why: ElectLeadersResponse(ErrorCode.NOT_CONTROLLER, why, []),
            lambda r: -1 if r.error_code == ErrorCode.NOT_CONTROLLER else None,
        )

    def decide(ctl: Controller, state: MetadataState, now_ms: int) -> Decision:
        return elect_leaders(state, election, asked, ctl.config.default_unclean_election)

    error, message, results = await _decided(ctx, decide)
    return ElectLeadersResponse(error, message, results)
