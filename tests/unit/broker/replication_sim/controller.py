"""The metadata quorum's voters and the controller that runs on whichever of them leads.

Why it is real underneath: ISR and leader-epoch bugs often hide in the interplay of the
controller's decisions with stale broker views, so the real :class:`Controller` decides on
a real :class:`MetadataState`, its records go through a :class:`SimCluster` (SimQuorum)
log, and brokers decode them again. A voter answers a broker's call as the node's handler
does, by the same exchanges (:mod:`rillet.broker.handlers.controller_decisions`: the
stale-epoch checks, the registration record, what a heartbeat notes and asks for, the
answers' fields, NOT_CONTROLLER with the leader as hint on a voter that does not lead);
only the Raft log (SimQuorum) and failover are modelled.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from sim_quorum import SimCluster

from rillet.broker.handlers.controller_decisions import (
    NOT_ACTIVE,
    ControllerOutcome,
    alter_partition,
    decided,
    heard_answer,
    heartbeat,
    metadata_fetch_answer,
    metadata_fetch_max_records,
    metadata_fetch_wait_ms,
    register,
)
from rillet.metadata_quorum.broker_leases import NO_ANSWER_HEARD
from rillet.metadata_quorum.controller import Controller, ControllerConfig
from rillet.metadata_quorum.controller_service import DecideFn
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.heartbeat_exchange import answer_stamp, heartbeat_arrived
from rillet.metadata_quorum.records import decode_entry, encode_entry
from rillet.metadata_quorum.state import MetadataState, PartitionState
from rillet.wire.cluster_messages import (
    AlterPartitionRequest,
    BrokerHeartbeatRequest,
    BrokerRegistrationRequest,
    MetadataFetchRequest,
)
from rillet.wire.error_codes import ErrorCode

from .messages import ClusterResponse, ControllerReq, ControllerResp
from .topology import BROKERS, CONTROLLER, TOPIC, VOTERS

if TYPE_CHECKING:
    from rillet.metadata_quorum.broker_leases import HeardAnswer

    from .simulation import Simulation


class SimController:
    """The quorum: the real Controller of the leading voter deciding on the real
    MetadataState, its records committed through a SimCluster (SimQuorum) and applied back
    from the log, one decision at a time like ControllerService.submit; and its voters,
    each answering the brokers' calls at its own network address."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        cfg = sim.config
        self.config = ControllerConfig(
            broker_session_timeout_ms=cfg.session_timeout_ms,
            auto_leader_rebalance=True,
            leader_rebalance_interval_ms=1_000,
            connection_lost_grace_ms=cfg.disconnect_grace_ms,
            new_controller_grace_ms=cfg.session_timeout_ms,
        )
        # The Controller (topic ids, assignment) and SimCluster draw from their own streams,
        # both derived from the run's seed, so their draws do not shift the network's.
        self.rng = random.Random(sim.rng.getrandbits(64))
        self.cluster = SimCluster(VOTERS, random.Random(sim.rng.getrandbits(64)))
        self.state = MetadataState()
        self.ctl: Controller | None = None
        self.parked: list[ControllerReq] = []  # metadata fetches long-polling for entries
        self.topic_id: str | None = None
        self.voters = {v: SimVoter(self, v) for v in VOTERS}

    def become_active(self) -> None:
        ctl = Controller(self.config, self.rng)
        ctl.on_become_leader(self.state, self.sim.now)
        self.ctl = ctl

    def failover(self, gap_ms: int) -> None:
        """The controller's voter loses leadership; another one takes over after a gap."""
        old = self.cluster.leader_id
        self.cluster.elect(None)
        self.ctl = None
        choice = self.sim.rng.choice([v for v in VOTERS if v != old])
        self.sim.at(self.sim.now + gap_ms, self._elected, choice)

    def _elected(self, voter: int) -> None:
        if self.cluster.leader_id is None:
            self.cluster.elect(voter)
            self.become_active()

    async def decide(self, fn: DecideFn) -> Decision:
        assert self.ctl is not None
        decision = fn(self.ctl, self.state, self.sim.now)
        if decision.records:
            leader = self.cluster.leader_id
            assert leader is not None
            member = self.cluster.member(leader)
            await member.propose(encode_entry(decision.records))
            before = self.state.partitions.get(self._key()) if self.topic_id else None
            for entry in await member.read_committed(self.state.last_applied_index):
                self.state.apply_entry(entry.index, decode_entry(entry.data))
            self._committed(before)
        return decision

    def _key(self) -> tuple[str, int]:
        assert self.topic_id is not None
        return self.topic_id, 0

    def _committed(self, before: PartitionState | None) -> None:
        if self.topic_id is None:
            topic = self.state.topic_by_name(TOPIC)
            self.topic_id = topic.topic_id if topic is not None else None
        if self.topic_id is not None:
            after = self.state.partitions.get(self._key())
            if after is not None and before != after:
                self.sim.checker.partition_committed(before, after)
        parked, self.parked = self.parked, []
        for req in parked:
            self._answer_metadata(req)

    async def tick(self) -> None:
        self.sim.at(self.sim.now + self.sim.config.controller_tick_ms, self.tick)
        if self.ctl is None:
            return
        await self.decide(lambda ctl, state, now: ctl.tick(state, now))
        if self.topic_id is None and len(self.state.unfenced_brokers()) == len(BROKERS):
            await self.decide(lambda ctl, state, now: ctl.create_topic(state, TOPIC, 1, 3, {}))

    def connection_lost(self, broker_id: int) -> None:
        b = self.state.brokers.get(broker_id)
        if self.ctl is not None and b is not None:
            self.ctl.connection_lost(self.state, broker_id, b.broker_epoch, self.sim.now)

    # -- the metadata log, which any voter serves ------------------------------------------------

    def on_request(self, req: ControllerReq) -> None:
        """handlers/cluster.handle_metadata_fetch: the committed entries after the broker's
        index, at once or when one commits within the request's (capped) wait."""
        request = req.request
        assert isinstance(request, MetadataFetchRequest)
        if self.cluster.commit_index > request.after_index:
            self._answer_metadata(req)
        else:
            self.parked.append(req)
            wait_ms = metadata_fetch_wait_ms(request)
            self.sim.at(self.sim.now + wait_ms, self._metadata_expired, req)

    def _metadata_expired(self, req: ControllerReq) -> None:
        if any(parked is req for parked in self.parked):
            self.parked = [parked for parked in self.parked if parked is not req]
            self._answer_metadata(req)

    def _answer_metadata(self, req: ControllerReq) -> None:
        """The slice SimQuorum.read_committed returns, read without awaiting."""
        request = req.request
        assert isinstance(request, MetadataFetchRequest)
        after = request.after_index
        entries = self.cluster.log[after : after + metadata_fetch_max_records(request)]
        broker = self.sim.brokers[req.broker]
        if broker.metadata_stalled_until > self.sim.now:
            return  # this broker's metadata is late: it goes on believing what it knew
        self.respond(CONTROLLER, req, metadata_fetch_answer(entries))

    def respond(self, src: int, req: ControllerReq, response: ClusterResponse) -> None:
        broker = self.sim.brokers[req.broker]
        answer = ControllerResp(req.req_id, response)
        self.sim.send(src, req.broker, broker.on_controller_response, answer)


class SimVoter:
    """One voter's side of the brokers' calls (the exchanges' ControllerSide): it decides
    on the controller only while it leads the quorum; otherwise it answers NOT_CONTROLLER
    naming the leader it knows of."""

    def __init__(self, quorum: SimController, node_id: int) -> None:
        self.quorum = quorum
        self.node_id = node_id

    @property
    def active(self) -> bool:
        quorum = self.quorum
        return quorum.ctl is not None and quorum.cluster.leader_id == self.node_id

    @property
    def state(self) -> MetadataState:
        return self.quorum.state

    def controller_id(self) -> int:
        leader = self.quorum.cluster.leader_id
        return -1 if leader is None else leader

    def now_ms(self) -> int:
        return self.quorum.sim.now

    async def decide(self, decide: DecideFn, commuting: bool = False) -> ControllerOutcome:
        if not self.active:
            return NOT_ACTIVE
        return decided(await self.quorum.decide(decide))

    def heartbeat_arrived(self, req: BrokerHeartbeatRequest) -> None:
        ctl = self.quorum.ctl
        if ctl is not None and self.active:
            heard = heard_answer(req)
            level = req.max_feature_level
            heartbeat_arrived(
                ctl, self.state, req.broker_id, req.broker_epoch, self.now_ms(), heard, level
            )

    def answer_stamp(self, broker_id: int, arrived_ms: int) -> HeardAnswer:
        ctl = self.quorum.ctl
        if ctl is None:
            return NO_ANSWER_HEARD
        return answer_stamp(ctl, broker_id, self.now_ms(), arrived_ms)

    async def on_request(self, req: ControllerReq) -> None:
        """The handlers of broker/handlers/cluster.py, on this voter."""
        request = req.request
        response: ClusterResponse
        if isinstance(request, BrokerRegistrationRequest):
            response = await register(self, request)
        elif isinstance(request, BrokerHeartbeatRequest):
            response = await heartbeat(self, request)
        elif isinstance(request, AlterPartitionRequest):
            # Traced on arrival too: a late or second copy shows up here before its effect.
            asked = (
                f"v{self.node_id} alter from b{request.broker_id} attempt {req.req_id} "
                f"pe {request.partition_epoch} isr {tuple(request.new_isr)}"
            )
            self.quorum.sim.trace_line(f"{asked}: arrived")
            response = await alter_partition(self, request)
            answer = ErrorCode(response.error_code).name
            self.quorum.sim.trace_line(f"{asked}: {answer} pe {response.partition_epoch}")
        else:
            raise TypeError(f"voters take no {type(request).__name__} here")
        self.quorum.respond(self.node_id, req, response)
