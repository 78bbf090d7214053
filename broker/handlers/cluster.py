"""The cluster-internal apis a voter serves: broker registration and heartbeats (decided by
the controller), metadata fetch for broker-only nodes, and DescribeQuorum for operators.

DescribeQuorum answers the node's own view (``rillet cluster status`` compares the nodes'),
or with ``leader_view`` (Kafka's DescribeQuorum) the Raft leader's: only the leader knows
how far each voter is, so a node that does not lead forwards the request there once over
its controller link, as Kafka's brokers forward it to the active controller. While no
leader is known, or when a forwarded request reaches a node that no longer leads, the
answer is NOT_LEADER_OR_FOLLOWER (Kafka's admin client retries), never a view with the
log ends unknown.
"""

from __future__ import annotations

import enum
import logging

import trio

from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.controller_calls import (
    decide_on_controller,
    forward_once,
    refused_auth,
)
from rillet.broker.handlers.controller_decisions import (
    NOT_A_VOTER,
    ControllerOutcome,
    alter_partition,
    heard_answer,
    heartbeat,
    metadata_fetch_answer,
    metadata_fetch_max_records,
    metadata_fetch_wait_ms,
    register,
)
from rillet.broker.handlers.deferred import Deferred
from rillet.broker.handlers.quorum_replication import voter_states
from rillet.metadata_quorum.broker_leases import NO_ANSWER_HEARD, HeardAnswer
from rillet.metadata_quorum.controller_service import DecideFn
from rillet.metadata_quorum.records import ProducerIds
from rillet.metadata_quorum.state import MetadataState
from rillet.raft.errors import RaftError, SnapshotRequired
from rillet.wire.cluster_messages import (
    AllocateProducerIdsRequest,
    AllocateProducerIdsResponse,
    AlterPartitionRequest,
    AlterPartitionResponse,
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
    BrokerStatus,
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    MetadataFetchRequest,
    MetadataFetchResponse,
)
from rillet.wire.error_codes import ErrorCode

log = logging.getLogger(__name__)


class _NodeController:
    """The exchanges' :class:`ControllerSide` on this node: its ControllerService."""

    def __init__(self, ctx: BrokerContext) -> None:
        self._ctx = ctx

    @property
    def state(self) -> MetadataState:
        return self._ctx.metadata.state

    def controller_id(self) -> int:
        return self._ctx.metadata.controller_id()

    def now_ms(self) -> int:
        return self._ctx.now_ms()

    async def decide(self, decide: DecideFn, commuting: bool = False) -> ControllerOutcome:
        return await decide_on_controller(self._ctx, decide, commuting)

    def heartbeat_arrived(self, req: BrokerHeartbeatRequest) -> None:
        controller = self._ctx.metadata.controller
        if controller is not None and controller.active:
            controller.broker_heartbeat_arrived(
                req.broker_id, req.broker_epoch, heard_answer(req), req.max_feature_level
            )

    def answer_stamp(self, broker_id: int, arrived_ms: int) -> HeardAnswer:
        controller = self._ctx.metadata.controller
        if controller is None:
            return NO_ANSWER_HEARD
        return controller.answer_stamp(broker_id, arrived_ms)


def handle_broker_registration(
    ctx: BrokerContext, req: BrokerRegistrationRequest
) -> BrokerRegistrationResponse | Deferred[BrokerRegistrationResponse]:
    refusal = refused_auth(ctx, req.cluster_id, req.auth)
    if refusal is not None:
        log.warning("refused registration of broker %d: %s", req.broker_id, refusal)
        return BrokerRegistrationResponse(ErrorCode.AUTHENTICATION_FAILED, error_message=refusal)
    return _register(ctx, req)


async def _register(
    ctx: BrokerContext, req: BrokerRegistrationRequest
) -> BrokerRegistrationResponse:
    answer = await register(_NodeController(ctx), req)
    if answer.error_code == ErrorCode.NONE:
        log.info("broker %d registered with epoch %d", req.broker_id, answer.broker_epoch)
    return answer


def handle_broker_heartbeat(
    ctx: BrokerContext, req: BrokerHeartbeatRequest
) -> BrokerHeartbeatResponse | Deferred[BrokerHeartbeatResponse]:
    refusal = refused_auth(ctx, req.cluster_id, req.auth)
    if refusal is not None:
        return BrokerHeartbeatResponse(ErrorCode.AUTHENTICATION_FAILED, error_message=refusal)
    return _heartbeat(ctx, req)


async def _heartbeat(ctx: BrokerContext, req: BrokerHeartbeatRequest) -> BrokerHeartbeatResponse:
    return await heartbeat(_NodeController(ctx), req)


def handle_alter_partition(
    ctx: BrokerContext, req: AlterPartitionRequest
) -> AlterPartitionResponse | Deferred[AlterPartitionResponse]:
    refusal = refused_auth(ctx, req.cluster_id, req.auth)
    if refusal is not None:
        return AlterPartitionResponse(ErrorCode.AUTHENTICATION_FAILED, error_message=refusal)
    return _alter_partition(ctx, req)


async def _alter_partition(
    ctx: BrokerContext, req: AlterPartitionRequest
) -> AlterPartitionResponse:
    return await alter_partition(_NodeController(ctx), req)


def handle_allocate_producer_ids(
    ctx: BrokerContext, req: AllocateProducerIdsRequest
) -> AllocateProducerIdsResponse | Deferred[AllocateProducerIdsResponse]:
    refusal = refused_auth(ctx, req.cluster_id, req.auth)
    if refusal is not None:
        return AllocateProducerIdsResponse(ErrorCode.AUTHENTICATION_FAILED, error_message=refusal)
    return _allocate_producer_ids(ctx, req)


async def _allocate_producer_ids(
    ctx: BrokerContext, req: AllocateProducerIdsRequest
) -> AllocateProducerIdsResponse:
    outcome = await decide_on_controller(
        ctx,
        lambda ctl, state, now: ctl.allocate_producer_ids(state, req.broker_id, req.broker_epoch),
    )
    controller_id = ctx.metadata.controller_id()
    decision = outcome.decision
    if outcome.error != ErrorCode.NONE or decision is None or not decision.records:
        return AllocateProducerIdsResponse(
            outcome.error, controller_id, error_message=outcome.message
        )
    block = decision.records[0]
    assert isinstance(block, ProducerIds)
    return AllocateProducerIdsResponse(
        ErrorCode.NONE, controller_id, block.first_producer_id, block.block_size
    )


def handle_metadata_fetch(
    ctx: BrokerContext, req: MetadataFetchRequest
) -> MetadataFetchResponse | Deferred[MetadataFetchResponse]:
    refusal = refused_auth(ctx, req.cluster_id, req.auth)
    if refusal is not None:
        return MetadataFetchResponse(ErrorCode.AUTHENTICATION_FAILED, error_message=refusal)
    if ctx.metadata.quorum is None:
        return NOT_A_VOTER
    return _metadata_fetch(ctx, req)


async def _metadata_fetch(ctx: BrokerContext, req: MetadataFetchRequest) -> MetadataFetchResponse:
    quorum = ctx.metadata.quorum
    assert quorum is not None
    entries = []
    try:
        with trio.move_on_after(metadata_fetch_wait_ms(req) / 1000):
            entries = await quorum.read_committed(req.after_index, metadata_fetch_max_records(req))
    except SnapshotRequired:
        # The log before after_index was compacted: send this node's whole state instead.
        state = ctx.metadata.state
        return MetadataFetchResponse(
            ErrorCode.NONE,
            [],
            state.last_applied_index,
            quorum.leadership().term,
            state.to_snapshot(),
        )
    except RaftError as exc:
        return MetadataFetchResponse(ErrorCode.REQUEST_TIMED_OUT, error_message=str(exc))
    return metadata_fetch_answer(entries)


class QuorumViewAt(enum.Enum):
    """Where a request for the Raft leader's view is answered."""

    HERE = "here"
    FORWARD = "forward"
    REFUSE = "refuse"


def leader_view_at(leads: bool, leader_known: bool, forwarded: bool) -> QuorumViewAt:
    """The leader answers; another node forwards once to the leader it knows of (a node
    without a quorum lets its controller link find it); a request already forwarded, or
    one asked while no leader is known, is refused."""
    if leads:
        return QuorumViewAt.HERE
    if forwarded or not leader_known:
        return QuorumViewAt.REFUSE
    return QuorumViewAt.FORWARD


def not_the_leaders_view(response: DescribeQuorumResponse) -> int | None:
    """For the controller link: None when ``response`` is to be passed on (the Raft
    leader's view, or an error that is not about leadership), else the leader it names (-1:
    none), where the link tries next. A node of the previous release ignores
    ``leader_view`` and answers its own view: the leader's only when it names itself."""
    if response.error_code == ErrorCode.NONE:
        if response.leader_id == response.node_id:
            return None
    elif response.error_code not in (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NOT_CONTROLLER):
        return None
    return response.leader_id if response.leader_id >= 0 else -1


def handle_describe_quorum(
    ctx: BrokerContext, req: DescribeQuorumRequest
) -> DescribeQuorumResponse | Deferred[DescribeQuorumResponse]:
    if not req.leader_view:
        return _describe_here(ctx, req)
    quorum = ctx.metadata.quorum
    at = leader_view_at(
        leads=quorum is not None and quorum.is_leader(),
        leader_known=quorum is None or quorum.leadership().leader_id is not None,
        forwarded=req.forwarded,
    )
    if at is QuorumViewAt.HERE:
        return _describe_here(ctx, req)
    if at is QuorumViewAt.REFUSE:
        why = "not the Raft leader (forwarded request)" if req.forwarded else "no Raft leader"
        return _not_the_leader(ctx, why)
    return forward_once(ctx, req, lambda why: _not_the_leader(ctx, why), not_the_leaders_view)


def _not_the_leader(ctx: BrokerContext, why: str) -> DescribeQuorumResponse:
    view = ctx.metadata
    quorum = view.quorum
    return DescribeQuorumResponse(
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ctx.config.node_id,
        view.controller_id(),
        quorum.leadership().term if quorum is not None else -1,
        sorted(quorum.voters) if quorum is not None else [],
        view.state.last_applied_index,
        [],
        0,
        0,
        [],
        error_message=f"node {ctx.config.node_id}: {why}",
    )


def _describe_here(ctx: BrokerContext, req: DescribeQuorumRequest) -> DescribeQuorumResponse:
    view = ctx.metadata
    state = view.state
    term = view.quorum.leadership().term if view.quorum is not None else -1
    voters = sorted(view.quorum.voters) if view.quorum is not None else []
    progress = view.quorum.replica_progress() if view.quorum is not None else []
    led = any(p.match_index >= 0 for p in progress)
    names = {tid: t.name for tid, t in state.topics.items()}
    return DescribeQuorumResponse(
        ErrorCode.NONE,
        ctx.config.node_id,
        view.controller_id(),
        term,
        voters or sorted(v.id for v in ctx.config.quorum.voters),
        state.last_applied_index,
        [
            BrokerStatus(b.broker_id, b.host, b.port, b.broker_epoch, b.fenced, b.rack)
            for b in sorted(state.brokers.values(), key=lambda b: b.broker_id)
        ],
        len(state.topics),
        len(state.partitions),
        [f"{names.get(t, t)}-{p}" for t, p in state.leaderless_partitions()],
        view.state_sha256() if req.include_state_digest else "",
        high_watermark=view.quorum.commit_index() if view.quorum and led else -1,
        voter_states=voter_states(progress, ctx.now_ms()),
        observer_states=voter_states(progress, ctx.now_ms(), voters=False),
        directory_id=view.quorum.directory_id if view.quorum is not None else "",
    )
