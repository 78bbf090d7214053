"""One broker process: what survives a crash, what a restart rebuilds, and its start.

Why a module of its own: the broker is scheduled in parts, one per task of a node
(:mod:`.controller_session`, :mod:`.metadata_follower`, :mod:`.replica_reconciler`,
:mod:`.follower_fetch_loop`, :mod:`.leader_fetch_handler`, :mod:`.isr_proposer`,
:mod:`.client_request_handler`), assembled into
:class:`~.broker.SimBroker`, all calling the one real replica. This base holds the state
they share, runs the flush and checkpoint tasks, and declares the few calls one part makes
into another, so each part can be read (and type-checked) on its own.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from rillet.broker.cluster.broker_membership import BrokerMembership
from rillet.broker.cluster.metadata_poll import MetadataPoll
from rillet.broker.replica.flush_pass import FlushPass, checkpoints_due
from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.broker.replica.reconcile_pass import Reconciliation
from rillet.metadata_quorum.follower_progress import FollowerProgress
from rillet.metadata_quorum.state import MetadataState, PartitionState
from rillet.partition_store.flush_plan import FlushPlan

from .partition_log import BrokerLog
from .topology import VOTERS

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
        self.voter_choice = self.sim.voter_choice_type(VOTERS)  # the controller link's
        self.flush_wakeup = False  # the flush task's wakeup event
        self.flush_waiting: int | None = None  # the flush task's wait under way, if it waits
        self.flush_waits = 0

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
        self._flush_wait()

    def crash(self) -> None:
        """SIGKILL: everything but the partition directory is gone."""
        self.up = False
        self.paused = False
        self.incarnation += 1
        self.deferred.clear()
        self.log.crash()
        self._reset()

    # -- the checkpoint and flush tasks: the real file writes and fsyncs, with a seeded fsync
    # latency; their passes are ReplicaManager's own (FlushPass, checkpoints_due) ------------

    def _hosted(self) -> list[PartitionReplica]:
        return [self.replica] if self.replica is not None else []

    def checkpoint(self) -> None:
        """ReplicaManager.run_high_watermark_checkpoint_task: every interval, the replicas
        whose high watermark moved."""
        for r in checkpoints_due(self._hosted()):
            r.checkpoint_high_watermark(durable=False)
        self.sim.later(self, self.sim.config.checkpoint_ms, self.checkpoint)

    def request_flush(self) -> None:
        """The replica's ``request_flush``: sets the flush task's wakeup, which ends its
        wait now (or, when a pass is under way, the wait after it at once)."""
        self.flush_wakeup = True
        if self.flush_waiting is not None:
            self.sim.later(self, 0, self._flush_woken, self.flush_waiting)

    def _flush_wait(self) -> None:
        """The flush task waits for its wakeup, at most the check interval."""
        self.flush_waits += 1
        self.flush_waiting = self.flush_waits
        delay = 0 if self.flush_wakeup else self.sim.config.flush_check_ms
        self.sim.later(self, delay, self._flush_woken, self.flush_waiting)

    def _flush_woken(self, wait: int) -> None:
        if self.flush_waiting != wait:
            return  # that wait ended already
        self.flush_waiting = None
        self.flush_wakeup = False
        flush_pass = FlushPass(self._hosted(), self.sim.now)
        self._flush_next(flush_pass, iter(flush_pass))

    def _flush_next(self, flush_pass: FlushPass, replicas: Iterator[PartitionReplica]) -> None:
        """The pass goes on with the next replica with a due plan: the plan runs (the real
        fsyncs) and completes after the seeded latency (appends, truncations and crashes
        may come in between); after the last, the task waits again."""
        for r in replicas:
            plan = flush_pass.due(r)
            if plan is None:
                continue
            plan.run()
            self.sim.stats["fsyncs"] += 1
            self.sim.later(
                self, self.sim.config.fsync_ms, self._fsynced, flush_pass, replicas, r, plan
            )
            return
        self._flush_wait()

    def _fsynced(
        self,
        flush_pass: FlushPass,
        replicas: Iterator[PartitionReplica],
        r: PartitionReplica,
        plan: FlushPlan,
    ) -> None:
        flush_pass.fsynced(r, plan)
        self._flush_next(flush_pass, replicas)

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
