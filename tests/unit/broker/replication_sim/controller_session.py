"""A broker's session with the controller: registration, heartbeats, the metadata log it
follows, and reconciling its replica with what that log says.

Why a module of its own: this schedules broker_lifecycle.py (whose heartbeat step,
``next_heartbeat_s``, it calls), the metadata follower and the partition reconciler, the
path by which stale or late metadata reaches a replica; it also routes the controller's
answers (an AlterPartition answer to :mod:`.isr_proposer`).
"""

from __future__ import annotations

from rillet.broker.cluster.broker_lifecycle import next_heartbeat_s
from rillet.broker.replica.replica_role import ReplicaRole, TopicPartitionKey
from rillet.metadata_quorum.records import decode_entry
from rillet.metadata_quorum.state import PartitionState
from rillet.wire.error_codes import ErrorCode

from .broker_process import BrokerProcess
from .messages import ControllerReq, ControllerResp
from .partition_log import TOPIC
from .topology import CONTROLLER


class ControllerSession(BrokerProcess):
    """The broker's side of broker_lifecycle.py (register, catch up, heartbeat), the
    metadata follower and the partition reconciler, scheduled."""

    def register(self) -> None:
        req_id = self.sim.next_id()
        self.registering = req_id
        req = ControllerReq(
            "register", self.node_id, req_id, incarnation=f"{self.node_id}.{self.incarnation}"
        )
        self.sim.send(self.node_id, CONTROLLER, self.sim.controller.on_request, req)
        self.sim.later(self, self.sim.config.request_timeout_ms, self._register_timeout, req_id)

    def _register_timeout(self, req_id: int) -> None:
        if self.registering == req_id:
            self.register()

    def poll_metadata(self) -> None:
        req_id = self.sim.next_id()
        self.md_in_flight = req_id
        req = ControllerReq(
            "metadata", self.node_id, req_id, after_index=self.metadata.last_applied_index
        )
        self.sim.send(self.node_id, CONTROLLER, self.sim.controller.on_request, req)
        timeout = self.sim.config.metadata_wait_ms + self.sim.config.request_timeout_ms
        self.sim.later(self, timeout, self._metadata_timeout, req_id)

    def _metadata_timeout(self, req_id: int) -> None:
        if self.md_in_flight == req_id:
            self.poll_metadata()

    def heartbeat(self) -> None:
        if self.broker_epoch is None or self.hb_in_flight is not None:
            return
        req_id = self.sim.next_id()
        self.hb_in_flight = req_id
        req = ControllerReq(
            "heartbeat",
            self.node_id,
            req_id,
            broker_epoch=self.broker_epoch,
            caught_up=self.caught_up,
        )
        self.sim.send(self.node_id, CONTROLLER, self.sim.controller.on_request, req)
        self.sim.later(self, self.sim.config.request_timeout_ms, self._heartbeat_timeout, req_id)

    def _heartbeat_timeout(self, req_id: int) -> None:
        if self.hb_in_flight == req_id:
            self.hb_in_flight = None
            self.heartbeat()

    def on_controller_response(self, resp: ControllerResp) -> None:
        sim = self.sim
        if resp.kind == "register" and resp.req_id == self.registering:
            if resp.error != ErrorCode.NONE:
                return  # the timeout registers again
            self.registering = None
            self.broker_epoch = resp.broker_epoch
            self.hb_in_flight = None
            self._maybe_caught_up()
            self.heartbeat()
        elif resp.kind == "heartbeat" and resp.req_id == self.hb_in_flight:
            self.hb_in_flight = None
            # The lifecycle's own step (broker_lifecycle.py), in virtual milliseconds.
            delay_s = next_heartbeat_s(resp.error, resp.fenced, sim.config.heartbeat_ms / 1000)
            if delay_s is None:
                self.broker_epoch = None
                self.register()
                return
            sim.later(self, round(delay_s * 1000), self.heartbeat)
        elif resp.kind == "metadata" and resp.req_id == self.md_in_flight:
            self.md_in_flight = None
            for index, data in resp.entries:
                if index == self.metadata.last_applied_index + 1:
                    self.metadata.apply_entry(index, decode_entry(data))
            self._maybe_caught_up()
            if self.caught_up:
                self.reconcile()
            self.poll_metadata()
        elif resp.kind == "alter":
            call = self.calls.get(resp.req_id)
            if call is not None:
                call.answered(resp)

    def _maybe_caught_up(self) -> None:
        """broker_lifecycle: caught up once the metadata holds this broker's registration."""
        if (
            not self.caught_up
            and self.broker_epoch is not None
            and self.metadata.last_applied_index >= self.broker_epoch
        ):
            self.caught_up = True
            self.reconcile()

    def partition(self) -> PartitionState | None:
        for p in self.metadata.partitions.values():
            return p
        return None

    def reconcile(self) -> None:
        """PartitionReconciler.reconcile for the one partition: the real replica on the
        real log, given its role."""
        p = self.partition()
        plog = self.log.plog
        if p is None or self.node_id not in p.replicas or plog is None:
            return
        if self.replica is None:
            replica_type = self.sim.replica_type
            self.replica = replica_type(TopicPartitionKey(TOPIC, 0), plog, self.request_flush)
            self.replica.min_insync_replicas = self.sim.config.min_insync_replicas
        role = ReplicaRole.of(p, self.node_id)
        was_leading = self.replica.leader
        self.replica.set_role(role, self.sim.now)
        if self.replica.leader is not None and self.replica.leader is not was_leading:
            self.sim.checker.leadership_started(self)
        self.maybe_fetch()
