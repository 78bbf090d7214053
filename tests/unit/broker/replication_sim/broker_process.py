"""One broker process: what survives a crash, what a restart rebuilds, and its start.

Why a module of its own: the broker is scheduled in parts, one per task of a node
(:mod:`.controller_session`, :mod:`.metadata_follower`, :mod:`.replica_reconciler`,
:mod:`.follower_fetch_loop`, :mod:`.leader_fetch_handler`, :mod:`.isr_proposer`,
:mod:`.client_request_handler`), assembled into
:class:`~.broker.SimBroker`, all calling the one real replica. This base holds the state
they share (with the flush and checkpoint tasks) and declares the few calls one part makes
into another, so each part can be read (and type-checked) on its own.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rillet.broker.cluster.broker_membership import BrokerMembership
from rillet.broker.cluster.metadata_poll import MetadataPoll
from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.broker.replica.reconcile_pass import Reconciliation
from rillet.metadata_quorum.follower_progress import FollowerProgress
from rillet.metadata_quorum.state import MetadataState, PartitionState
from rillet.partition_store.flush_plan import FlushPlan

from .partition_log import BrokerLog

if TYPE_CHECKING:
    from rillet.broker.replica.replication.followed_positions import SentPosition

    from .controller_calls import SimCall
    from .in_flight import AcksWaiter, ParkedFetch
    from .messages import ControllerResp
    from .simulation import Simulation


class BrokerProcess(abc.ABC):
    """One broker process: its partition directory survives a crash (log, leader-epoch
    cache, recovery point, high-watermark checkpoint); the rest (metadata, the replica,
    leader state, requests in flight) is rebuilt by the restart, which opens the log again
    and recovers it."""

    def __init__(self, sim: Simulation, node_id: int) -> None:
        self.sim = sim
        self.node_id = node_id
        self.log = BrokerLog(sim.workdir / f"b{node_id}", sim.log_config)
        self.incarnation = 0
        self.up = False
        self.paused = False
        self.deferred: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []
        self.metadata_stalled_until = 0
        self._reset()

    def _reset(self) -> None:
        # The broker's own membership state machine (broker_lifecycle.py drives it).
        self.membership = BrokerMembership(
            self.sim.config.heartbeat_ms / 1000, self.sim.config.session_timeout_ms / 1000
        )
        self.incarnation_id = ""  # the registration's, new with every new membership
        self.catching_up_to: int | None = None  # the broker epoch the metadata must reach
        self.followed = FollowerProgress()  # MetadataFollower's core: the state it builds
        self.replica: PartitionReplica | None = None
        self.reconciliation = Reconciliation(self.node_id)  # PartitionReconciler's core
        self.fetch_in_flight: tuple[int, int] | None = None  # (request id, leader)
        self.sent: dict[int, SentPosition] = {}
        self.parked: list[ParkedFetch] = []
        self.acks_waiters: list[AcksWaiter] = []
        # The metadata read under way (MetadataPoll, or a broken subclass of it).
        self.md_poll: MetadataPoll | None = None
        self.md_in_flight: int | None = None  # the request id of its fetch in flight
        self.calls: dict[int, SimCall] = {}  # calls to the controller, by attempt id
        self.flushing = False

    @property
    def metadata(self) -> MetadataState:
        """The broker's committed metadata, as its follower has applied it."""
        return self.followed.state

    def __repr__(self) -> str:
        return f"b{self.node_id}"

    # -- process lifecycle ---------------------------------------------------------------------

    def start(self) -> None:
        self.up, self.paused = True, False
        self.incarnation += 1
        self.deferred.clear()
        self._reset()
        sim = self.sim
        self.log.open(sim.now)
        self.start_membership()
        self.poll_metadata()
        sim.later(self, sim.config.isr_check_ms, self.isr_check)
        sim.later(self, sim.config.checkpoint_ms, self.checkpoint)
        sim.later(self, sim.config.flush_check_ms, self.flush_check)

    def crash(self) -> None:
        """SIGKILL: everything but the partition directory is gone."""
        self.up = False
        self.paused = False
        self.incarnation += 1
        self.deferred.clear()
        self.log.crash()
        self._reset()

    def checkpoint(self) -> None:
        """ReplicaManager's high-watermark checkpoint task (the real file write)."""
        if self.replica is not None:
            self.replica.checkpoint_high_watermark()
        self.sim.later(self, self.sim.config.checkpoint_ms, self.checkpoint)

    # -- the flush task: real fsyncs of the real log, with a seeded latency ------------------------

    def request_flush(self) -> None:
        """The replica's ``request_flush``: the flush task wakes up now."""
        self.sim.later(self, 0, self.flush)

    def flush_check(self) -> None:
        self.flush()
        self.sim.later(self, self.sim.config.flush_check_ms, self.flush_check)

    def flush(self) -> None:
        """One pass of ReplicaManager.run_flush_task: one fsync at a time, completed after
        the seeded fsync latency (appends, truncations and crashes may come in between)."""
        r = self.replica
        if r is None or self.flushing:
            return
        plan = r.flush_due(self.sim.now)
        if plan is None:
            return
        plan.run()
        self.flushing = True
        self.sim.stats["fsyncs"] += 1
        self.sim.later(self, self.sim.config.fsync_ms, self._flush_done, r, plan)

    def _flush_done(self, r: PartitionReplica, plan: FlushPlan) -> None:
        self.flushing = False
        if r is self.replica:
            r.flush_done(plan)
            self.flush()

    # -- calls between the parts (see broker.py for which part implements which) ----------

    @abc.abstractmethod
    def start_membership(self) -> None: ...

    @abc.abstractmethod
    def poll_metadata(self) -> None: ...

    @abc.abstractmethod
    def partition(self) -> PartitionState | None: ...

    @abc.abstractmethod
    def metadata_answered(self, resp: ControllerResp) -> None: ...

    @abc.abstractmethod
    def metadata_woke(self) -> None: ...

    @abc.abstractmethod
    def metadata_caught_up(self) -> None: ...

    @abc.abstractmethod
    def metadata_applied(self) -> None: ...

    @abc.abstractmethod
    def maybe_fetch(self) -> None: ...

    @abc.abstractmethod
    def wake_parked_fetches(self) -> None: ...

    @abc.abstractmethod
    def settle_acks(self) -> None: ...

    @abc.abstractmethod
    def isr_check(self) -> None: ...
