"""A broker's membership in the cluster: register, catch up, heartbeat, shut down cleanly.

1. Register with the controller under a fresh incarnation id; the answer is the broker
   epoch (the index of the registration record).
2. Wait until the local metadata has applied that index: from then on it is at least as new
   as the cluster was when the broker joined, so hosting and deleting partitions by it is
   safe (``caught_up`` is set; the partition reconciler starts), and so is answering
   clients' metadata questions (the index is the committed offset the view's readiness
   waits for).
3. Heartbeat every ``broker_heartbeat_interval_ms`` with ``caught_up``: the controller
   unfences the broker and renews its lease; ``unfenced`` is set on the first answer that
   says so. A heartbeat refused for a stale epoch sends the broker back to step 1.
4. On shutdown, one heartbeat with ``shutting_down`` asks the controller to fence the
   broker and move its leaderships now rather than after the session timeout.

Steps 1-3 are the sans-I/O state machine
:class:`~rillet.broker.cluster.broker_membership.BrokerMembership` (phases, timing, what an
answer means); this driver makes its calls and waits, and the replication simulation
executes the same machine.
"""

from __future__ import annotations

import logging
import uuid

import trio

from rillet.broker.cluster.broker_membership import BrokerMembership, CatchUp, Register
from rillet.broker.cluster.controller_link import ControllerLink
from rillet.broker.cluster.metadata_view import MetadataView
from rillet.broker.config import NodeConfig
from rillet.broker.errors import ControllerUnreachable
from rillet.metadata_quorum.features import LATEST_LEVEL
from rillet.wire.cluster_messages import (
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
)
from rillet.wire.error_codes import ErrorCode

log = logging.getLogger(__name__)

CONTROLLED_SHUTDOWN_TIMEOUT_S = 5.0


class BrokerLifecycle:
    """The trio driver of :class:`BrokerMembership`: it sends what the membership asks for
    over the controller link, waits for the metadata follower, and feeds the answers back."""

    def __init__(
        self,
        config: NodeConfig,
        view: MetadataView,
        link: ControllerLink,
        advertised_port: int,
        kafka_port: int = -1,
    ) -> None:
        self._config = config
        self._kafka_port = kafka_port
        self._view = view
        self._link = link
        self._port = advertised_port
        self._request_timeout_s = config.quorum.request_timeout_ms / 1000
        self.membership = BrokerMembership(
            config.quorum.broker_heartbeat_interval_ms / 1000,
            config.quorum.broker_session_timeout_ms / 1000,
        )
        self.caught_up = trio.Event()
        self.unfenced = trio.Event()

    @property
    def broker_epoch(self) -> int | None:
        """The broker epoch last registered (kept while registering again)."""
        return self.membership.broker_epoch

    @property
    def fenced(self) -> bool:
        """Whether the last heartbeat answer said this broker is fenced."""
        return self.membership.fenced

    async def run(self) -> None:
        """Register and heartbeat forever (cancel to stop)."""
        fresh = self.membership.start()
        while True:
            epoch = await self._register(fresh)
            self._view.readiness.learn_committed(epoch)
            await self._view.follower.wait_applied(epoch)
            self.caught_up.set()
            self.membership.metadata_caught_up()
            fresh = await self._heartbeat_until_stale(epoch)
            log.warning("broker epoch %d is no longer current: registering again", epoch)

    async def _register(self, step: Register) -> int:
        """Register under a new incarnation id until the controller accepts (the
        membership says when to send again)."""
        cfg = self._config
        auth = self._view.auth
        request = BrokerRegistrationRequest(
            cfg.cluster_id,
            auth.token,
            cfg.node_id,
            uuid.uuid4().hex,
            cfg.advertised_host,
            self._port,
            cfg.rack,
            cfg.kafka_advertised_host if self._kafka_port >= 0 else "",
            self._kafka_port,
            LATEST_LEVEL,
        )
        while True:
            if step.after_s > 0:
                await trio.sleep(step.after_s)
            try:
                response: BrokerRegistrationResponse = await self._link.call(
                    request, self._request_timeout_s
                )
            except ControllerUnreachable as exc:
                log.info("registration pending: %s", exc)
                answered = self.membership.registration_answered(None)
            else:
                answered = self.membership.registration_answered(
                    response.error_code, response.broker_epoch
                )
                if isinstance(answered, CatchUp):
                    log.info(
                        "registered as broker %d, epoch %d", cfg.node_id, response.broker_epoch
                    )
                    return answered.broker_epoch
                if response.error_code == ErrorCode.AUTHENTICATION_FAILED:
                    log.error("registration refused: %s", response.error_message)
                else:
                    log.info(
                        "registration not accepted yet: %s", ErrorCode(response.error_code).name
                    )
            assert isinstance(answered, Register)  # the table allows nothing else here
            step = answered

    async def _heartbeat_until_stale(self, epoch: int) -> Register:
        """Heartbeat as the membership times it until it says the epoch is stale; returns
        the registration to start with."""
        while True:
            try:
                response: BrokerHeartbeatResponse = await self._link.call(
                    self._heartbeat_request(epoch, shutting_down=False), self._request_timeout_s
                )
            except ControllerUnreachable as exc:
                log.warning("heartbeat failed: %s", exc)
                step = self.membership.heartbeat_answered(None, trio.current_time())
            else:
                was_fenced = self.membership.fenced
                step = self.membership.heartbeat_answered(
                    response.error_code,
                    trio.current_time(),
                    response.fenced,
                    response.answer_key,
                    response.answered_ms,
                )
                if response.error_code == ErrorCode.NONE:
                    if was_fenced != response.fenced:
                        log.info("broker %s", "fenced" if response.fenced else "unfenced")
                    if not response.fenced:
                        self.unfenced.set()
            if isinstance(step, Register):
                return step
            # Cut short when the local quorum names a new leader.
            await self._link.pause(step.after_s)

    def _heartbeat_request(self, epoch: int, shutting_down: bool) -> BrokerHeartbeatRequest:
        cfg = self._config
        return BrokerHeartbeatRequest(
            cfg.cluster_id,
            self._view.auth.token,
            cfg.node_id,
            epoch,
            self._view.state.last_applied_index,
            self.caught_up.is_set(),
            shutting_down,
            *self.membership.heard,
            LATEST_LEVEL,
        )

    def hears_controller(self) -> bool:
        """Whether a heartbeat answer came within the last half session. A broker that has
        heard nothing for longer may be the one cut off: it then asks for no ISR removals
        (a deaf leader would drop healthy followers, and the controller may commit that
        before it fences the leader, leaving the partition no leader to elect)."""
        return self.membership.hears_controller(trio.current_time())

    async def controlled_shutdown(self) -> bool:
        """Ask the controller to fence this broker now; True when it did."""
        epoch = self.broker_epoch
        if epoch is None:
            return False
        try:
            response = await self._link.call(
                self._heartbeat_request(epoch, shutting_down=True), CONTROLLED_SHUTDOWN_TIMEOUT_S
            )
        except ControllerUnreachable as exc:
            log.warning("controlled shutdown not acknowledged: %s", exc)
            return False
        return bool(response.error_code == ErrorCode.NONE)
