"""Leaders cut off from the cluster stop taking writes, so clients go find the new leader.

A leader that hears no controller (its heartbeats go unanswered: ``hears_controller``) and
has in-sync followers that stopped fetching is stuck: no acks=all write can commit until
the ISR shrinks, and only the controller can shrink it. Meanwhile the controller, once this
broker's session has run out, has fenced it and elected another leader, but this node,
cut off, does not learn of it. Kafka's leader goes on taking writes it can never commit, and
its clients wait on it until the cut heals (or for their request timeout), since nothing
tells them to look elsewhere.

Such a leader is *stranded* here: it answers every write, and every acks=all write still
waiting, with NOT_LEADER_OR_FOLLOWER (retriable), and its Metadata answers name no leader
for the partition (LEADER_NOT_AVAILABLE), so a client that asks this node again does not
come straight back. The clients refresh their metadata and find the new leader as soon as
one of the other nodes answers them. Nothing is
acknowledged that was not before: a refused write was not committed, and a write whose
wait is cut short is one its client retries (an idempotent producer's retry is recognised
by its sequence number wherever it lands). A leader whose followers all keep fetching is
never stranded, so a controller failover alone does not stop writes; and as soon as this
node hears the controller again, or its followers catch up, it takes writes again.

The decision is :func:`is_stranded`; :class:`StrandedLeaderWatch` applies it to every
leader on this node each ISR check interval.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import trio

from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.broker.replica.replica_manager import ReplicaManager

log = logging.getLogger(__name__)


def is_stranded(
    replica: PartitionReplica, now_ms: int, lag_max_ms: int, hears_controller: bool
) -> bool:
    """Whether ``replica`` leads, hears no controller, and has an in-sync follower that
    lagged past ``lag_max_ms`` (``replica.lag.time.max.ms``)."""
    leader = replica.leader
    if leader is None or replica.deleted or hears_controller:
        return False
    return bool(leader.lagging_in_sync(now_ms, lag_max_ms))


class StrandedLeaderWatch:
    """Marks this node's stranded leaders, and clears the mark when they are not any more."""

    def __init__(
        self,
        replicas: ReplicaManager,
        lag_max_ms: int,
        interval_ms: int,
        registered: Callable[[], bool],
        hears_controller: Callable[[], bool],
    ) -> None:
        self._replicas = replicas
        self._lag_max_ms = lag_max_ms
        self._interval_s = interval_ms / 1000
        self._registered = registered
        self._hears_controller = hears_controller

    @property
    def stranded(self) -> int:
        """How many leaders here were stranded after the last pass."""
        return sum(len(ps) for ps in self._replicas.stranded.values())

    async def run(self) -> None:
        while True:
            await trio.sleep(self._interval_s)
            self.check()

    def check(self) -> None:
        """One pass: a single comparison per leader, no I/O. While this node hears the
        controller and no leader here is stranded (nearly always) there is nothing to mark
        or clear, and the pass over every replica is skipped."""
        if not self._registered():
            return
        hears = self._hears_controller()
        if hears and not self._replicas.stranded:
            return
        before = self.stranded
        now = self._replicas.clock.steady_ms()
        by_topic: dict[str, set[int]] = {}
        for replica in self._replicas.replicas():
            stranded = is_stranded(replica, now, self._lag_max_ms, hears)
            if stranded != replica.stranded:
                replica.set_stranded(stranded)
            if replica.stranded:
                by_topic.setdefault(replica.key.topic, set()).add(replica.key.partition)
        self._replicas.stranded = {t: frozenset(ps) for t, ps in by_topic.items()}
        count = self.stranded
        if count != before:
            if count:
                log.warning(
                    "%d partitions led here take no writes: this node hears neither the "
                    "controller nor their in-sync followers",
                    count,
                )
            else:
                log.info("no partition led here is cut off any more")
