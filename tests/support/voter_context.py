"""A voter's middle layer without a node: the handlers' context on a one-voter in-memory
quorum (sim_quorum), with the real metadata follower and controller service running, so
handlers that decide on the controller commit real records and read them back.

Why: most admin, group and transaction handlers are thin over "decide on the controller,
then answer from the committed state". Their contracts (what they answer, and what they
refuse: not the controller, stale epochs, bad credentials) are only checked for real when a
controller runs. Run it under ``autojump_clock``: the controller's ticks then cost nothing.

``broker_only`` adds a second node's context that follows the same metadata log and reaches
the controller through :class:`InProcessLink`, which hands each request to the voter's own
handlers (only the network between the two is left out).
"""

from __future__ import annotations

import inspect
import random
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

import trio
from broker_context import NODE_ID, TEST_SECRET, Middle, TrioClock
from sim_quorum import SimCluster

from rillet.broker.cluster.cluster_auth import ClusterAuth
from rillet.broker.cluster.metadata_view import MetadataView
from rillet.broker.config import NodeConfig
from rillet.broker.dispatcher import HANDLERS
from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.controller_calls import decide_on_controller
from rillet.broker.replica.replica_manager import ReplicaManager
from rillet.metadata_quorum.controller import Controller, ControllerConfig
from rillet.metadata_quorum.controller_service import ControllerService
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.follower import MetadataFollower
from rillet.metadata_quorum.records import RegisterBroker
from rillet.metadata_quorum.state import MetadataState
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import API_OF_REQUEST
from rillet.wire.request import Request

R = TypeVar("R")


async def answer(result: Any) -> Any:
    """A handler's answer: awaited when the handler returned a coroutine."""
    if inspect.iscoroutine(result):
        return await result
    return result


async def _never_refuses(host: str, port: int) -> bool:
    return False  # no listener to probe: every broker counts as possibly alive


class InProcessLink:
    """A broker's line to the controller that calls the voter's handlers in-process (the
    :class:`~rillet.broker.cluster.controller_link.ControllerLink` interface, without sockets)."""

    def __init__(self, controller: BrokerContext) -> None:
        self.controller = controller
        self.calls: list[Any] = []

    @property
    def controller_hint(self) -> int | None:
        return NODE_ID

    async def call(
        self,
        request: Request[R],
        deadline_s: float,
        not_controller: Callable[[Any], int | None] | None = None,
    ) -> R:
        self.calls.append(request)
        route = HANDLERS[API_OF_REQUEST[type(request)]]
        with trio.fail_after(deadline_s):
            return cast(R, await answer(route(self.controller, request)))


@dataclass
class Voter(Middle):
    """The voter's context (``ctx``), its quorum's cluster and a place to start more tasks."""

    cluster: SimCluster
    nursery: trio.Nursery

    @property
    def state(self) -> MetadataState:
        return self.ctx.metadata.state

    async def decide(self, decide: Callable[[Controller, MetadataState, int], Decision]) -> None:
        """Commit a decision of the controller (set-up steps of a test); it must succeed."""
        outcome = await decide_on_controller(self.ctx, decide)
        assert outcome.error == ErrorCode.NONE, outcome.message

    async def live_brokers(self, *broker_ids: int) -> None:
        """Register the brokers and unfence them (one caught-up heartbeat each)."""
        for broker_id in broker_ids:
            await self._live_broker(broker_id)

    async def _live_broker(self, broker_id: int) -> None:
        record = RegisterBroker(
            broker_id, f"incarnation-{broker_id}", f"host{broker_id}", 9000 + broker_id
        )

        def register(c: Controller, s: MetadataState, now: int) -> Decision:
            return c.register_broker(s, record, now)

        await self.decide(register)
        epoch = self.state.brokers[broker_id].broker_epoch

        def unfence(c: Controller, s: MetadataState, now: int) -> Decision:
            return c.heartbeat(s, broker_id, epoch, True, now)

        await self.decide(unfence)

    async def topic(self, name: str, partitions: int = 1, replication_factor: int = 1) -> None:
        await self.decide(
            lambda c, s, now: c.create_topic(s, name, partitions, replication_factor, {})
        )

    def auth(self) -> tuple[str, bytes]:
        """The cluster id and token a node's internal requests carry."""
        auth = self.ctx.metadata.auth
        return auth.cluster_id, auth.token

    async def broker_only(self, data_dir: Path, node_id: int = 2) -> BrokerContext:
        """Another node's context: it follows the voter's metadata log (no quorum, no
        controller) and forwards to the voter through an :class:`InProcessLink`."""
        config = NodeConfig(
            node_id=node_id, data_dir=data_dir, authorizer=self.ctx.config.authorizer
        )
        manager = ReplicaManager(config, self.clock)
        follower = MetadataFollower(self.cluster.member(NODE_ID))
        view = MetadataView(node_id, follower, ClusterAuth(config.cluster_id, TEST_SECRET))
        view.readiness.learn_committed(0)
        view.link = cast(Any, InProcessLink(self.ctx))
        self.nursery.start_soon(follower.run)
        await follower.wait_applied(self.state.last_applied_index)
        return BrokerContext(config, manager, 0, view)


@asynccontextmanager
async def voter(data_dir: Path, config: NodeConfig | None = None) -> AsyncIterator[Voter]:
    """Node 1 as the only voter and the active controller, its follower applying the log."""
    config = config or NodeConfig(node_id=NODE_ID, data_dir=data_dir)
    clock = TrioClock()
    cluster = SimCluster([NODE_ID], random.Random(1))
    quorum = cluster.member(NODE_ID)
    follower = MetadataFollower(quorum)
    service = ControllerService(
        quorum,
        follower,
        ControllerConfig(classic_groups=config.groups.classic()),
        random.Random(1),
        clock.now_ms,
        listener_refuses=_never_refuses,
    )
    auth = ClusterAuth(config.cluster_id, TEST_SECRET)
    view = MetadataView(NODE_ID, follower, auth, quorum, service)
    view.readiness.learn_committed(0)
    manager = ReplicaManager(config, clock)
    ctx = BrokerContext(config, manager, 0, view)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(follower.run)
            nursery.start_soon(service.run)
            with trio.fail_after(5):
                while not service.active:
                    await trio.sleep(0.01)
            yield Voter(ctx, manager, clock, cluster, nursery)
            nursery.cancel_scope.cancel()
    finally:
        await manager.close_all()
