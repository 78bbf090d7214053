"""One broker process: what survives a crash, what a restart rebuilds, and its start.

Why a module of its own: the broker is modelled in parts, one per piece of driver code it
copies (:mod:`.controller_session`, :mod:`.follower_fetch_loop`,
:mod:`.leader_fetch_handler`, :mod:`.isr_proposer`, :mod:`.client_request_handler`),
assembled into :class:`~.broker.SimBroker`. This base holds the state they share and
declares the few calls one part makes into another, so each part can be read (and
type-checked) on its own.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rillet.metadata_quorum.state import MetadataState, PartitionState

from .partition_log import SimLog

if TYPE_CHECKING:
    from .in_flight import AcksWaiter, AlterCall, ParkedFetch, SentFetch
    from .messages import ControllerResp
    from .replica import ReplicaModel
    from .simulation import Simulation


class BrokerProcess(abc.ABC):
    """One broker process: its log and high-watermark checkpoint survive a crash, the rest
    (metadata, roles, leader state, requests in flight) is rebuilt by the restart."""

    def __init__(self, sim: Simulation, node_id: int) -> None:
        self.sim = sim
        self.node_id = node_id
        self.log = SimLog()
        self.checkpointed_hw = 0
        self.incarnation = 0
        self.up = False
        self.paused = False
        self.deferred: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []
        self.metadata_stalled_until = 0
        self._reset()

    def _reset(self) -> None:
        self.broker_epoch: int | None = None
        self.registering: int | None = None
        self.caught_up = False
        self.metadata = MetadataState()
        self.replica: ReplicaModel | None = None
        self.fetch_in_flight: tuple[int, int] | None = None  # (request id, leader)
        self.sent: dict[int, SentFetch] = {}
        self.parked: list[ParkedFetch] = []
        self.md_in_flight: int | None = None
        self.hb_in_flight: int | None = None
        self.alter: AlterCall | None = None

    def __repr__(self) -> str:
        return f"b{self.node_id}"

    # -- process lifecycle ---------------------------------------------------------------------

    def start(self) -> None:
        self.up, self.paused = True, False
        self.incarnation += 1
        self.deferred.clear()
        self._reset()
        sim = self.sim
        self.register()
        self.poll_metadata()
        sim.later(self, sim.config.isr_check_ms, self.isr_check)
        sim.later(self, sim.config.checkpoint_ms, self.checkpoint)

    def crash(self) -> None:
        """SIGKILL: everything but the log and the checkpoint is gone."""
        self.up = False
        self.paused = False
        self.incarnation += 1
        self.deferred.clear()
        self._reset()

    def checkpoint(self) -> None:
        if self.replica is not None:
            self.checkpointed_hw = self.replica.high_watermark
        self.sim.later(self, self.sim.config.checkpoint_ms, self.checkpoint)

    # -- calls between the parts (see broker.py for which part implements which) ----------

    @abc.abstractmethod
    def register(self) -> None: ...

    @abc.abstractmethod
    def poll_metadata(self) -> None: ...

    @abc.abstractmethod
    def partition(self) -> PartitionState | None: ...

    @abc.abstractmethod
    def maybe_fetch(self) -> None: ...

    @abc.abstractmethod
    def wake_parked_fetches(self) -> None: ...

    @abc.abstractmethod
    def isr_check(self) -> None: ...

    @abc.abstractmethod
    def _alter_answered(self, resp: ControllerResp) -> None: ...

    @abc.abstractmethod
    def acks_resolved(self, waiter: AcksWaiter, reached: bool) -> None: ...
