"""This node's window on the cluster metadata, for request handlers.

Every node holds the committed metadata state (a voter applies its own Raft log, a
broker-only node follows a voter's log). Voters also hold the quorum and the controller
service; broker-only nodes reach the controller through the :class:`ControllerLink`.
Handlers read the state, learn who the controller is, and wait until a change they caused
elsewhere has been applied here.
"""

from __future__ import annotations

from collections.abc import Callable

import trio

from rillet.broker.cluster_auth import ClusterAuth
from rillet.broker.controller_link import ControllerLink
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

    @property
    def state(self) -> MetadataState:
        return self.follower.state

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

    async def wait_applied(self, offset: int, timeout_s: float) -> bool:
        """Wait until this node has applied the metadata log up to ``offset`` (True), or the
        timeout passes (False). Woken by the follower as it applies entries: no polling."""
        if self.applied_offset >= offset:
            return True
        with trio.move_on_after(timeout_s):
            await self.follower.wait_applied(offset)
            return True
        return False

    async def wait_until(
        self, condition: Callable[[MetadataState], bool], timeout_s: float
    ) -> bool:
        """Wait until ``condition(state)`` holds (True) or the timeout passes (False)."""
        with trio.move_on_after(timeout_s):
            while not condition(self.state):
                await self.follower.wait_applied(self.state.last_applied_index + 1)
            return True
        return False
