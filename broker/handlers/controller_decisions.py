"""What the controller decides on a broker's cluster request, and what it answers.

Why a core of its own: the handlers of handlers/cluster.py run these on the node's
:class:`~rillet.metadata_quorum.controller_service.ControllerService`, and the replication
simulation (tests) runs the very same on its SimQuorum controller, so the stale-epoch
checks, the record a registration commits, which decision a heartbeat asks for and what
it notes around it, the metadata long poll's caps and every field of the answers cannot
drift apart between the two. Nothing here touches a socket, task or clock: the exchanges
(:func:`register`, :func:`heartbeat`, :func:`alter_partition`) run on a
:class:`ControllerSide`, which takes each decision (one at a time, or batched when it
commutes) and tells the time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from rillet.metadata_quorum.broker_leases import NO_ANSWER_HEARD, HeardAnswer
from rillet.metadata_quorum.controller import Controller
from rillet.metadata_quorum.controller_service import DecideFn
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.records import RegisterBroker
from rillet.metadata_quorum.state import MetadataState
from rillet.raft.quorum import Entry
from rillet.wire.cluster_messages import (
    AlterPartitionRequest,
    AlterPartitionResponse,
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
    MetadataEntry,
    MetadataFetchRequest,
    MetadataFetchResponse,
)
from rillet.wire.error_codes import ErrorCode

MAX_METADATA_FETCH_RECORDS = 10_000
MAX_METADATA_FETCH_WAIT_MS = 5_000


@dataclass(frozen=True, slots=True)
class ControllerOutcome:
    error: ErrorCode
    message: str | None = None
    decision: Decision | None = None

    @property
    def group_error(self) -> ErrorCode:
        """The error as a group api answers it: a node that is not (or no longer) the
        controller is not the coordinator, and the client looks for the new one."""
        return ErrorCode.NOT_COORDINATOR if self.error == ErrorCode.NOT_CONTROLLER else self.error


# A node whose controller is not active decides nothing: the broker's link tries the voter
# this answer's controller_id names.
NOT_ACTIVE = ControllerOutcome(ErrorCode.NOT_CONTROLLER, "this node is not the controller")


def decided(decision: Decision) -> ControllerOutcome:
    """The outcome of a decision the controller took (and committed, if it had records)."""
    return ControllerOutcome(ErrorCode(decision.error), decision.message, decision)


class ControllerSide(Protocol):
    """Where a voter's controller decides: the node's ControllerService, or the
    simulation's."""

    @property
    def state(self) -> MetadataState:
        """The committed metadata state this voter has applied."""

    def controller_id(self) -> int:
        """The voter this one believes runs the controller (-1: none known): the hint an
        answer carries."""

    def now_ms(self) -> int: ...

    async def decide(self, decide: DecideFn, commuting: bool = False) -> ControllerOutcome:
        """Take ``decide`` on the active controller and commit its records (NOT_ACTIVE when
        this voter's controller is not active)."""

    def heartbeat_arrived(self, req: BrokerHeartbeatRequest) -> None:
        """Note the heartbeat's arrival on the active controller (nothing otherwise)."""

    def answer_stamp(self, broker_id: int, arrived_ms: int) -> HeardAnswer:
        """The stamp a heartbeat answer carries (NO_ANSWER_HEARD without a controller)."""


# -- BrokerRegistration ------------------------------------------------------------------------


def registration_decision(req: BrokerRegistrationRequest) -> DecideFn:
    """Register the broker under the request's incarnation (a retry of the same incarnation
    keeps its epoch; a new one gets a new epoch)."""
    record = RegisterBroker(
        req.broker_id,
        req.incarnation_id,
        req.host,
        req.port,
        req.rack,
        req.kafka_host,
        req.kafka_port,
        req.max_feature_level,
    )
    return lambda ctl, state, now_ms: ctl.register_broker(state, record, now_ms)


def registration_answer(
    req: BrokerRegistrationRequest,
    outcome: ControllerOutcome,
    state: MetadataState,
    controller_id: int,
) -> BrokerRegistrationResponse:
    """The answer after ``outcome``, read from the state the decision was committed to."""
    if outcome.error != ErrorCode.NONE:
        return BrokerRegistrationResponse(outcome.error, controller_id, -1, outcome.message)
    broker = state.brokers[req.broker_id]
    return BrokerRegistrationResponse(ErrorCode.NONE, controller_id, broker.broker_epoch)


async def register(
    side: ControllerSide, req: BrokerRegistrationRequest
) -> BrokerRegistrationResponse:
    outcome = await side.decide(registration_decision(req))
    return registration_answer(req, outcome, side.state, side.controller_id())


# -- BrokerHeartbeat ---------------------------------------------------------------------------


def heard_answer(req: BrokerHeartbeatRequest) -> HeardAnswer:
    """The last answer the broker says it heard (the controller fences a broker that
    reaches it but hears nothing back)."""
    return HeardAnswer(req.heard_answer_key, req.heard_answer_ms)


def notes_arrival(req: BrokerHeartbeatRequest) -> bool:
    """Whether the heartbeat's arrival renews the broker's lease before its decision runs
    (a broker shutting down asks to be fenced instead)."""
    return not req.shutting_down


def heartbeat_decision(req: BrokerHeartbeatRequest) -> DecideFn:
    """A controlled shutdown fences the broker and moves its leaderships; any other
    heartbeat renews the lease, and unfences a broker that has caught up."""
    if req.shutting_down:
        return lambda ctl, state, now_ms: ctl.controlled_shutdown(
            state, req.broker_id, req.broker_epoch
        )
    heard = heard_answer(req)
    return lambda ctl, state, now_ms: ctl.heartbeat(
        state, req.broker_id, req.broker_epoch, req.caught_up, now_ms, heard
    )


def heartbeat_answer(
    req: BrokerHeartbeatRequest,
    outcome: ControllerOutcome,
    state: MetadataState,
    controller_id: int,
    stamp: HeardAnswer,
) -> BrokerHeartbeatResponse:
    """The answer after ``outcome``: whether the broker is fenced now, and ``stamp`` (the
    answer for it to echo in its next heartbeat)."""
    if outcome.error != ErrorCode.NONE:
        return BrokerHeartbeatResponse(outcome.error, controller_id, True, outcome.message)
    broker = state.brokers.get(req.broker_id)
    fenced = broker is None or broker.fenced
    return BrokerHeartbeatResponse(
        ErrorCode.NONE, controller_id, fenced, None, stamp.key, stamp.answered_ms
    )


async def heartbeat(side: ControllerSide, req: BrokerHeartbeatRequest) -> BrokerHeartbeatResponse:
    """Note the arrival (the lease runs from it), decide, then stamp the answer."""
    arrived_ms = side.now_ms()
    if notes_arrival(req):
        side.heartbeat_arrived(req)
    outcome = await side.decide(heartbeat_decision(req))
    stamp = NO_ANSWER_HEARD
    if outcome.error == ErrorCode.NONE:
        stamp = side.answer_stamp(req.broker_id, arrived_ms)
    return heartbeat_answer(req, outcome, side.state, side.controller_id(), stamp)


# -- AlterPartition ----------------------------------------------------------------------------


def alter_partition_decision(req: AlterPartitionRequest) -> DecideFn:
    """Only the broker's current incarnation may change an ISR; the controller then checks
    the leader and partition epochs the proposal was based on."""

    def decide(ctl: Controller, state: MetadataState, now_ms: int) -> Decision:
        broker = state.brokers.get(req.broker_id)
        if broker is None or broker.broker_epoch != req.broker_epoch:
            return Decision([], ErrorCode.UNKNOWN_MEMBER_ID, "stale or unknown broker epoch")
        return ctl.alter_partition(
            state,
            req.topic_id,
            req.partition,
            req.broker_id,
            req.leader_epoch,
            req.partition_epoch,
            list(req.new_isr),
        )

    return decide


def alter_partition_answer(
    req: AlterPartitionRequest,
    outcome: ControllerOutcome,
    state: MetadataState,
    controller_id: int,
) -> AlterPartitionResponse:
    """The partition as committed after ``outcome`` (its ISR and epochs), also when the
    change was refused: the leader settles its proposal against it."""
    p = state.partitions.get((req.topic_id, req.partition))
    if p is None:
        return AlterPartitionResponse(
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, controller_id, error_message=outcome.message
        )
    return AlterPartitionResponse(
        outcome.error,
        controller_id,
        list(p.isr),
        p.leader_epoch,
        p.partition_epoch,
        outcome.message,
    )


async def alter_partition(
    side: ControllerSide, req: AlterPartitionRequest
) -> AlterPartitionResponse:
    # ISR changes of different partitions commute, and a leader has at most one in flight
    # per partition: a broker leading thousands of partitions that all shrink at once (a
    # follower died) gets them committed many per Raft entry, not one round trip each.
    outcome = await side.decide(alter_partition_decision(req), commuting=True)
    return alter_partition_answer(req, outcome, side.state, side.controller_id())


# -- MetadataFetch -----------------------------------------------------------------------------

NOT_A_VOTER = MetadataFetchResponse(
    ErrorCode.NOT_CONTROLLER, error_message="only voters serve the metadata log"
)


def metadata_fetch_max_records(req: MetadataFetchRequest) -> int:
    """How many entries one answer carries at most (at least one)."""
    return min(max(req.max_records, 1), MAX_METADATA_FETCH_RECORDS)


def metadata_fetch_wait_ms(req: MetadataFetchRequest) -> int:
    """How long the long poll waits for an entry after ``after_index`` (capped: a broker
    cannot hold a voter's request for longer)."""
    return min(max(req.max_wait_ms, 0), MAX_METADATA_FETCH_WAIT_MS)


def metadata_fetch_answer(entries: Sequence[Entry]) -> MetadataFetchResponse:
    """The committed entries found within the wait (none: the wait ended empty)."""
    return MetadataFetchResponse(
        ErrorCode.NONE, [MetadataEntry(e.index, e.term, e.data) for e in entries]
    )
