"""A broker's session with the controller: its membership (register, catch up, heartbeat),
the metadata log it follows, and reconciling its replica with what that log says.

Why a module of its own: the membership is the broker's own
:class:`~rillet.broker.cluster.broker_membership.BrokerMembership` (the state machine
broker_lifecycle.py drives); this part executes its actions as events (``Register`` and
``Heartbeat`` as calls through :class:`~.controller_calls.SimCall`, ``CatchUp`` as a wait
for the followed metadata), follows the metadata log and reconciles the replica, the path
by which stale or late metadata reaches a replica; it also routes the controller's answers
to the calls (and the metadata read) waiting for them.
"""

from __future__ import annotations

from collections.abc import Callable

from rillet.broker.cluster.broker_membership import Action, CatchUp, Heartbeat, Register
from rillet.metadata_quorum.features import LATEST_LEVEL
from rillet.metadata_quorum.state import PartitionState
from rillet.wire.cluster_messages import (
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
    MetadataFetchResponse,
)

from .broker_process import BrokerProcess
from .controller_calls import SimCall
from .messages import ClusterResponse, ControllerResp
from .topology import CLUSTER_ID


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

    def on_controller_response(self, resp: ControllerResp) -> None:
        if isinstance(resp.response, MetadataFetchResponse):
            self.metadata_answered(resp)
            return
        call = self.calls.get(resp.req_id)
        if call is not None:
            call.answered(resp)

    def metadata_woke(self) -> None:
        """The follower applied entries: what waits on them (BrokerLifecycle's catch-up,
        the partition reconciler) looks again."""
        self._maybe_caught_up()
        self.metadata_applied()

    def _maybe_caught_up(self) -> None:
        """BrokerLifecycle.run's wait: caught up once the metadata holds the registration."""
        epoch = self.catching_up_to
        if epoch is not None and self.metadata.last_applied_index >= epoch:
            self.catching_up_to = None
            action = self.membership.metadata_caught_up()
            self.metadata_caught_up()  # the partition reconciler starts once caught up
            self._act(action)

    def partition(self) -> PartitionState | None:
        for p in self.metadata.partitions.values():
            return p
        return None
