"""Producer ids for idempotent producers, handed out by every broker from controller blocks.

Ids must be unique across the cluster and never reused, also across controller changes and
restarts: the controller hands a broker a block of ids as one metadata record (the
committed ``next_producer_id`` only grows), and the broker serves InitProducerId from its
block without a round trip until it runs out (Kafka's KIP-730). A block left unused by a
restart is simply skipped.
"""

from __future__ import annotations

from collections.abc import Callable

import trio

from rillet.broker.cluster.cluster_auth import ClusterAuth
from rillet.broker.cluster.controller_link import ControllerLink
from rillet.broker.errors import BrokerError, ControllerUnreachable
from rillet.wire.cluster_messages import AllocateProducerIdsRequest, AllocateProducerIdsResponse
from rillet.wire.error_codes import ErrorCode


class ProducerIdUnavailable(BrokerError):
    """No producer id block could be obtained (not registered yet, or no controller)."""


class ProducerIdSource:
    def __init__(
        self,
        node_id: int,
        link: ControllerLink,
        auth: ClusterAuth,
        broker_epoch: Callable[[], int | None],
        request_timeout_s: float,
    ) -> None:
        self._node_id = node_id
        self._link = link
        self._auth = auth
        self._broker_epoch = broker_epoch
        self._request_timeout_s = request_timeout_s
        self._next = 0
        self._end = 0
        self._lock = trio.Lock()

    async def next_id(self) -> int:
        async with self._lock:
            if self._next >= self._end:
                await self._allocate()
            producer_id = self._next
            self._next += 1
            return producer_id

    async def _allocate(self) -> None:
        epoch = self._broker_epoch()
        if epoch is None:
            raise ProducerIdUnavailable("this broker has not registered with the controller yet")
        request = AllocateProducerIdsRequest(
            self._auth.cluster_id, self._auth.token, self._node_id, epoch
        )
        try:
            response: AllocateProducerIdsResponse = await self._link.call(
                request, self._request_timeout_s
            )
        except ControllerUnreachable as exc:
            raise ProducerIdUnavailable(str(exc)) from exc
        if response.error_code != ErrorCode.NONE or response.block_size <= 0:
            raise ProducerIdUnavailable(
                f"{ErrorCode(response.error_code).name}: {response.error_message}"
            )
        self._next = response.first_producer_id
        self._end = response.first_producer_id + response.block_size
