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
"""

from __future__ import annotations

import logging
import uuid

import trio

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

RETRY_S = 0.1
CONTROLLED_SHUTDOWN_TIMEOUT_S = 5.0


def next_heartbeat_s(
    error_code: int | None, fenced: bool, interval_s: float, new_controller: bool = False
) -> float | None:
    """The heartbeat loop's step after an answer (``error_code`` None: no answer came),
    with ``fenced`` as last heard: None to register again (the epoch is stale:
    UNKNOWN_MEMBER_ID), else the seconds until the next heartbeat: the interval, or at most
    ``RETRY_S`` while fenced (unfencing should follow catching up promptly). A step of its
    own so that the replication simulation runs the same loop.

    ``new_controller``: the answer is the first from a controller this broker had not heard
    (its answer key is new). The next heartbeat then goes at once, echoing it: a controller
    renews the lease of the previous quorum leader's broker only once that broker echoes
    one of its answers (it may be deaf, cut off one way), counting its session from when
    the quorum last heard it. A former controller resuming from a pause shorter than the
    session (SIGSTOP, a stall) was fenced when its echo waited a heartbeat interval past
    that session's end; Kafka keeps such a broker, so the pause row cost leaderships."""
    if error_code == ErrorCode.UNKNOWN_MEMBER_ID:
        return None
    if error_code == ErrorCode.NONE and new_controller:
        return 0.0
    if error_code == ErrorCode.NONE and not fenced:
        return interval_s
    return min(interval_s, RETRY_S if fenced else interval_s)


class BrokerLifecycle:
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
        self._interval_s = config.quorum.broker_heartbeat_interval_ms / 1000
        self.broker_epoch: int | None = None
        # The last heartbeat answer received (echoed in every heartbeat: the controller
        # fences a broker that reaches it but hears nothing back) and when it came.
        self._heard = (0, -1)
        self._heard_at_s: float | None = None
        # The answer key last echoed at once (next_heartbeat_s): once per controller, so two
        # controllers answering in turn cannot make a loop without pauses.
        self._echoed_key = 0
        self._session_s = config.quorum.broker_session_timeout_ms / 1000
        self.caught_up = trio.Event()
        self.unfenced = trio.Event()
        self.fenced = True

    async def run(self) -> None:
        """Register and heartbeat forever (cancel to stop)."""
        while True:
            epoch = await self._register()
            self.broker_epoch = epoch
            self._view.readiness.learn_committed(epoch)
            await self._view.follower.wait_applied(epoch)
            self.caught_up.set()
            await self._heartbeat_until_stale(epoch)
            log.warning("broker epoch %d is no longer current: registering again", epoch)

    async def _register(self) -> int:
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
            try:
                response: BrokerRegistrationResponse = await self._link.call(
                    request, self._request_timeout_s
                )
            except ControllerUnreachable as exc:
                log.info("registration pending: %s", exc)
                continue
            if response.error_code == ErrorCode.NONE:
                log.info("registered as broker %d, epoch %d", cfg.node_id, response.broker_epoch)
                return response.broker_epoch
            if response.error_code == ErrorCode.AUTHENTICATION_FAILED:
                log.error("registration refused: %s", response.error_message)
            else:
                log.info("registration not accepted yet: %s", ErrorCode(response.error_code).name)
            await trio.sleep(RETRY_S)

    async def _heartbeat_until_stale(self, epoch: int) -> None:
        while True:
            new_controller = False
            try:
                response: BrokerHeartbeatResponse = await self._link.call(
                    self._heartbeat_request(epoch, shutting_down=False), self._request_timeout_s
                )
            except ControllerUnreachable as exc:
                log.warning("heartbeat failed: %s", exc)
                code = None
            else:
                code = response.error_code
                if code == ErrorCode.NONE:
                    key = response.answer_key
                    new_controller = key not in (self._heard[0], self._echoed_key)
                    if new_controller:
                        self._echoed_key = key
                    self._heard = (key, response.answered_ms)
                    self._heard_at_s = trio.current_time()
                    if self.fenced != response.fenced:
                        log.info("broker %s", "fenced" if response.fenced else "unfenced")
                    self.fenced = response.fenced
                    if not response.fenced:
                        self.unfenced.set()
            delay_s = next_heartbeat_s(code, self.fenced, self._interval_s, new_controller)
            if delay_s is None:
                return
            await self._link.pause(delay_s)  # cut short when the local quorum names a new leader

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
            *self._heard,
            LATEST_LEVEL,
        )

    def hears_controller(self) -> bool:
        """Whether a heartbeat answer came within the last half session. A broker that has
        heard nothing for longer may be the one cut off: it then asks for no ISR removals
        (a deaf leader would drop healthy followers, and the controller may commit that
        before it fences the leader, leaving the partition no leader to elect)."""
        heard_at = self._heard_at_s
        return heard_at is not None and trio.current_time() - heard_at < self._session_s / 2

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
