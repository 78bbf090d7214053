"""What the replica manager's flush and checkpoint tasks do in one pass, decided without
doing it.

Why a core of its own: ``ReplicaManager.run_flush_task`` runs fsyncs in worker threads and
yields to the event loop between replicas, and the replication simulation (tests) runs
them with a seeded latency between scheduled events; both run this object, so which
replicas get an fsync (asked for by an append, due by the flush policy, or waited for by
the high watermark), that one runs at a time, and what follows a finished one (the replica
adopts the new recovery point and exposes what is now durable) are decided in one place.
When a pass runs is the task's: at once when a replica asks (``request_flush``), else
after ``tasks.flush_check_interval_ms`` of waiting. It touches no file, thread or clock: the time
arrives as an argument and the driver runs each plan.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.partition_store.flush_plan import FlushPlan


class FlushPass:
    """One pass of the flush task over the replicas hosted when it began: iterate it, ask
    :meth:`due` for each replica in turn, run the plan (off the event loop) before asking
    the next, and report it with :meth:`fsynced`."""

    def __init__(self, replicas: Iterable[PartitionReplica], now_ms: int) -> None:
        self._replicas = list(replicas)  # a replica installed meanwhile waits for the next
        self.now_ms = now_ms

    def __iter__(self) -> Iterator[PartitionReplica]:
        return iter(self._replicas)

    def due(self, replica: PartitionReplica) -> FlushPlan | None:
        """The fsync to run for ``replica`` now, if any (see ``PartitionReplica.flush_due``:
        one was asked for, the flush policy wants one, or the high watermark waits for it)."""
        return replica.flush_due(self.now_ms)

    def fsynced(self, replica: PartitionReplica, plan: FlushPlan) -> None:
        """``plan`` ran: the replica adopts its recovery point and, when its high watermark
        waits for fsyncs, exposes what is now durable (acks=all writes may complete)."""
        replica.flush_done(plan)


def checkpoints_due(replicas: Iterable[PartitionReplica]) -> list[PartitionReplica]:
    """The replicas whose high watermark moved since their last checkpoint (the periodic
    checkpoint task writes only those; a deleted one is left alone)."""
    return [
        r for r in replicas if not r.deleted and r.high_watermark != r.checkpointed_high_watermark
    ]
