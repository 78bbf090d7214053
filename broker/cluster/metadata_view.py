"""This node's window on the cluster metadata, for request handlers.

Every node holds the committed metadata state (a voter applies its own Raft log, a
broker-only node follows a voter's log). Voters also hold the quorum and the controller
service; broker-only nodes reach the controller through the :class:`ControllerLink`.
Handlers read the state, learn who the controller is, wait until a change they caused
elsewhere has been applied here, and ask whether the node has caught up since it started.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Awaitable, Callable

import trio

from rillet.broker.cluster.cluster_auth import ClusterAuth
from rillet.broker.cluster.controller_link import ControllerLink
from rillet.broker.cluster.metadata_readiness import MetadataReadiness, NotReady
from rillet.metadata_quorum.controller_service import ControllerService
from rillet.metadata_quorum.follower import MetadataFollower
from rillet.metadata_quorum.state import MetadataState
from rillet.raft.quorum import Quorum

NO_CONTROLLER = -1


class MetadataView:
    def __init__(
        self,
        node_id: int,
        follower: MetadataFollower,
        auth: ClusterAuth,
        quorum: Quorum | None = None,
        controller: ControllerService | None = None,
    ) -> None:
        self.node_id = node_id
        self.follower = follower
        self.auth = auth
        self.quorum = quorum
        self.controller = controller
        self.link: ControllerLink | None = None  # set once the node's nursery runs
        # Waits until this node hosts the partitions as of a metadata offset (the partition
        # reconciler's wait_reconciled); set by the node once its reconciler exists.
        self.wait_reconciled: Callable[[int], Awaitable[None]] | None = None
        self._digest: tuple[MetadataState, int, str] | None = None
        # Closed to metadata questions until the node has caught up after its start (the
        # lifecycle feeds it the committed offset it learns when it registers).
        self.readiness = MetadataReadiness()

    @property
    def state(self) -> MetadataState:
        return self.follower.state

    def state_sha256(self) -> str:
        """SHA-256 of the canonical snapshot of the state, computed once per applied index
        (a status request every few hundred milliseconds must not re-encode thousands of
        partitions each time)."""
        state = self.state
        cached = self._digest
        if cached is not None and cached[0] is state and cached[1] == state.last_applied_index:
            return cached[2]
        digest = hashlib.sha256(state.to_snapshot()).hexdigest()
        self._digest = (state, state.last_applied_index, digest)
        return digest

    @property
    def is_voter(self) -> bool:
        return self.quorum is not None

    def controller_id(self) -> int:
        """The voter believed to run the controller, or -1 when none is known."""
        if self.quorum is not None:
            leader = self.quorum.leadership().leader_id
            return NO_CONTROLLER if leader is None else leader
        hint = self.link.controller_hint if self.link is not None else None
        return NO_CONTROLLER if hint is None else hint

    def controller_is_local(self) -> bool:
        return self.controller is not None and self.controller.active

    def has_partition(self, topic: str, partition: int) -> bool:
        t = self.state.topic_by_name(topic)
        return t is not None and (t.topic_id, partition) in self.state.partitions

    @property
    def applied_offset(self) -> int:
        """The metadata log offset (Raft index) of the last entry applied on this node."""
        return self.state.last_applied_index

    def not_ready(self) -> NotReady | None:
        """Why this node may not answer a metadata question now, or None when it may."""
        return self.readiness.check(self.applied_offset)

    async def wait_applied(self, offset: int, timeout_s: float) -> bool:
        """Wait until this node has applied the metadata log up to ``offset`` (True), or the
        timeout passes (False). Woken by the follower as it applies entries: no polling."""
        if self.applied_offset >= offset:
            return True
        with trio.move_on_after(timeout_s):
            await self.follower.wait_applied(offset)
            return True
        return False

    async def wait_hosted(self, offset: int) -> None:
        """Wait until this node has applied the metadata log up to ``offset`` and taken up
        (opened, led or followed) the partitions it then assigns here: a topic a client was
        told is created can be produced to and fetched from on this node at once."""
        await self.wait_applied(offset, math.inf)
        if self.wait_reconciled is not None:
            await self.wait_reconciled(offset)

    async def wait_until(
        self, condition: Callable[[MetadataState], bool], timeout_s: float
    ) -> bool:
        """Wait until ``condition(state)`` holds (True) or the timeout passes (False)."""
        with trio.move_on_after(timeout_s):
            while not condition(self.state):
                await self.follower.wait_applied(self.state.last_applied_index + 1)
            return True
        return False
