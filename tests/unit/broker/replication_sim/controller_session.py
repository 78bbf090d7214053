"""A broker's session with the controller: its membership (register, catch up, heartbeat),
the metadata log it follows, and reconciling its replica with what that log says.

Why a module of its own: the membership is the broker's own
:class:`~rillet.broker.cluster.broker_membership.BrokerMembership` (the state machine
broker_lifecycle.py drives); this part executes its actions as events (``Register`` and
``Heartbeat`` as calls through :class:`~.controller_calls.SimCall`, ``CatchUp`` as a wait
for the followed metadata), follows the metadata log and reconciles the replica, the path
by which stale or late metadata reaches a replica; it also routes the controller's answers
to the calls waiting for them.
"""

from __future__ import annotations

from collections.abc import Callable

from rillet.broker.cluster.broker_membership import Action, CatchUp, Heartbeat, Register
from rillet.broker.replica.replica_role import ReplicaRole, TopicPartitionKey
from rillet.metadata_quorum.features import LATEST_LEVEL
from rillet.metadata_quorum.records import decode_entry
from rillet.metadata_quorum.state import PartitionState
from rillet.wire.cluster_messages import (
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
    MetadataFetchRequest,
    MetadataFetchResponse,
)

from .broker_process import BrokerProcess
from .controller_calls import SimCall
from .messages import ClusterResponse, ControllerReq, ControllerResp
from .partition_log import TOPIC
from .topology import CLUSTER_ID, CONTROLLER


class ControllerSession(BrokerProcess):
    """BrokerLifecycle's driving of the membership, the metadata follower and the partition
    reconciler, scheduled."""

    def start_membership(self) -> None:
        self._act(self.membership.start())

    def _act(self, action: Action) -> None:
        """Do what the membership asks for next."""
        if isinstance(action, Register):
            if action.fresh:  # BrokerLifecycle._register: a new incarnation id
                self.incarnation_id = f"{self.node_id}.{self.sim.next_id()}"
            self._after(action.after_s, self._register)
        elif isinstance(action, CatchUp):
            self.catching_up_to = action.broker_epoch
            self._maybe_caught_up()
        else:
            self._after(action.after_s, self._heartbeat)

    def _after(self, delay_s: float, fn: Callable[[], None]) -> None:
        """Now, or after ``delay_s`` (the driver sleeps only for a positive delay)."""
        if delay_s > 0:
            self.sim.later(self, round(delay_s * 1000), fn)
        else:
            fn()

    def _register(self) -> None:
        request = BrokerRegistrationRequest(
            CLUSTER_ID, b"", self.node_id, self.incarnation_id, "sim", self.node_id,
            max_feature_level=LATEST_LEVEL,
        )  # fmt: skip
        timeout = self.sim.config.request_timeout_ms
        SimCall(self, request, timeout, self._registered).start()

    def _registered(self, resp: ClusterResponse | None) -> None:
        if resp is None:
            self._act(self.membership.registration_answered(None))
        else:
            assert isinstance(resp, BrokerRegistrationResponse)
            self._act(self.membership.registration_answered(resp.error_code, resp.broker_epoch))

    def _heartbeat(self) -> None:
        """BrokerLifecycle._heartbeat_request: the answer it heard last, echoed."""
        epoch = self.membership.broker_epoch
        assert epoch is not None  # heartbeats follow a registration
        request = BrokerHeartbeatRequest(
            CLUSTER_ID, b"", self.node_id, epoch, self.metadata.last_applied_index,
            self.membership.caught_up, False, *self.membership.heard, LATEST_LEVEL,
        )  # fmt: skip
        timeout = self.sim.config.request_timeout_ms
        SimCall(self, request, timeout, self._heartbeat_answered).start()

    def _heartbeat_answered(self, resp: ClusterResponse | None) -> None:
        now_s = self.sim.now / 1000
        if resp is None:
            action: Heartbeat | Register = self.membership.heartbeat_answered(None, now_s)
        else:
            assert isinstance(resp, BrokerHeartbeatResponse)
            action = self.membership.heartbeat_answered(
                resp.error_code, now_s, resp.fenced, resp.answer_key, resp.answered_ms
            )
        if isinstance(action, Register):
            self.sim.trace_line(f"{self} broker epoch stale: registering again")
        self._act(action)

    def poll_metadata(self) -> None:
        req_id = self.sim.next_id()
        self.md_in_flight = req_id
        after = self.metadata.last_applied_index
        wait_ms = self.sim.config.metadata_wait_ms
        request = MetadataFetchRequest(CLUSTER_ID, b"", after, 1000, wait_ms)
        req = ControllerReq(self.node_id, req_id, request)
        self.sim.send(self.node_id, CONTROLLER, self.sim.controller.on_request, req)
        timeout = self.sim.config.metadata_wait_ms + self.sim.config.request_timeout_ms
        self.sim.later(self, timeout, self._metadata_timeout, req_id)

    def _metadata_timeout(self, req_id: int) -> None:
        if self.md_in_flight == req_id:
            self.poll_metadata()

    def on_controller_response(self, resp: ControllerResp) -> None:
        if isinstance(resp.response, MetadataFetchResponse):
            if resp.req_id == self.md_in_flight:
                self._metadata_answered(resp.response)
            return
        call = self.calls.get(resp.req_id)
        if call is not None:
            call.answered(resp)

    def _metadata_answered(self, resp: MetadataFetchResponse) -> None:
        self.md_in_flight = None
        for entry in resp.entries:
            if entry.index == self.metadata.last_applied_index + 1:
                self.metadata.apply_entry(entry.index, decode_entry(entry.data))
        self._maybe_caught_up()
        if self.membership.caught_up:
            self.reconcile()
        self.poll_metadata()

    def _maybe_caught_up(self) -> None:
        """BrokerLifecycle.run's wait: caught up once the metadata holds the registration."""
        epoch = self.catching_up_to
        if epoch is not None and self.metadata.last_applied_index >= epoch:
            self.catching_up_to = None
            first = not self.membership.caught_up
            action = self.membership.metadata_caught_up()
            if first:
                self.reconcile()  # the partition reconciler starts once caught up
            self._act(action)

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
