"""The active controller on the metadata quorum.

Why it is real underneath: ISR and leader-epoch bugs often hide in the interplay of the
controller's decisions with stale broker views, so the real :class:`Controller` decides on
a real :class:`MetadataState`, its records go through a :class:`SimCluster` (SimQuorum)
log, and brokers decode them again; only the request plumbing and failover are modelled.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING

from sim_quorum import SimCluster

from rillet.metadata_quorum.controller import Controller, ControllerConfig
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.records import RegisterBroker, decode_entry, encode_entry
from rillet.metadata_quorum.state import MetadataState, PartitionState
from rillet.wire.error_codes import ErrorCode

from .messages import ControllerReq, ControllerResp
from .topology import BROKERS, CONTROLLER, TOPIC, VOTERS

if TYPE_CHECKING:
    from .simulation import Simulation


class SimController:
    """The active controller: the real Controller deciding on the real MetadataState, its
    records committed through a SimCluster (SimQuorum) and applied back from the log, one
    decision at a time like ControllerService.submit."""

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

    async def decide(self, fn: Callable[[Controller, MetadataState, int], Decision]) -> Decision:
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

    async def on_request(self, req: ControllerReq) -> None:
        """The handlers of broker/handlers/cluster.py, as the active controller runs them."""
        if req.kind == "metadata":  # any voter serves the committed log
            if self.cluster.commit_index > req.after_index:
                self._answer_metadata(req)
            else:
                self.parked.append(req)
                self.sim.at(
                    self.sim.now + self.sim.config.metadata_wait_ms, self._metadata_expired, req
                )
            return
        if self.ctl is None:
            self._respond(req, ControllerResp(req.kind, req.req_id, ErrorCode.NOT_CONTROLLER))
            return
        if req.kind == "register":
            record = RegisterBroker(req.broker, req.incarnation, "sim", req.broker)
            d = await self.decide(lambda ctl, state, now: ctl.register_broker(state, record, now))
            epoch = self.state.brokers[req.broker].broker_epoch if not d.error else -1
            self._respond(req, ControllerResp(req.kind, req.req_id, d.error, broker_epoch=epoch))
        elif req.kind == "heartbeat":
            d = await self.decide(
                lambda ctl, state, now: ctl.heartbeat(
                    state, req.broker, req.broker_epoch, req.caught_up, now
                )
            )
            b = self.state.brokers.get(req.broker)
            fenced = b is None or b.fenced
            self._respond(req, ControllerResp(req.kind, req.req_id, d.error, fenced=fenced))
        elif req.kind == "alter":
            d = await self.decide(lambda ctl, state, now: self._alter(ctl, state, req))
            p = self.state.partitions[self._key()]
            resp = ControllerResp(
                req.kind, req.req_id, d.error, isr=p.isr, partition_epoch=p.partition_epoch
            )
            self._respond(req, resp)

    def _alter(self, ctl: Controller, state: MetadataState, req: ControllerReq) -> Decision:
        broker = state.brokers.get(req.broker)
        if broker is None or broker.broker_epoch != req.broker_epoch:
            return Decision([], ErrorCode.UNKNOWN_MEMBER_ID, "stale or unknown broker epoch")
        assert self.topic_id is not None
        return ctl.alter_partition(
            state,
            self.topic_id,
            0,
            req.broker,
            req.leader_epoch,
            req.partition_epoch,
            list(req.isr),
        )

    def _metadata_expired(self, req: ControllerReq) -> None:
        if any(parked is req for parked in self.parked):
            self.parked = [parked for parked in self.parked if parked is not req]
            self._answer_metadata(req)

    def _answer_metadata(self, req: ControllerReq) -> None:
        """handlers/cluster._metadata_fetch: the committed entries after the broker's index
        (the slice SimQuorum.read_committed returns, read without awaiting)."""
        entries = tuple((e.index, e.data) for e in self.cluster.log[req.after_index :])
        broker = self.sim.brokers[req.broker]
        if broker.metadata_stalled_until > self.sim.now:
            return  # this broker's metadata is late: it goes on believing what it knew
        self._respond(req, ControllerResp("metadata", req.req_id, ErrorCode.NONE, entries=entries))

    def _respond(self, req: ControllerReq, resp: ControllerResp) -> None:
        broker = self.sim.brokers[req.broker]
        self.sim.send(CONTROLLER, req.broker, broker.on_controller_response, resp)
