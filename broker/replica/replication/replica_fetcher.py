"""Followers pull from partition leaders: one fetch loop per leader broker (trio driver).

After every metadata reconciliation the manager groups the partitions this node follows by
their leader and makes sure a loop runs for each leader; a loop ends once it has nothing to
fetch. Each loop sends one Fetch (``replica_id`` = this node, with the cluster-secret proof)
for all its partitions, long-polling on the leader, and applies each partition's answer:
append the records, take the leader's high watermark, or cut a diverging suffix first (see
:mod:`follower_state`). An answer is dropped when the partition changed meanwhile (another
leader or epoch, a truncation, an append by a newer loop), so two loops never interleave
writes to one log.

Replication throttles (replication_throttle.py) act here on the follower's side: while the
node's ``follower.replication.throttled.rate`` bucket is in debt, the partitions it covers
sit out of the fetch (the session forgets them; they are named again once the debt is paid)
and the bytes their answers bring are charged to it. Other partitions are never held back.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Callable, Mapping
from dataclasses import replace

import trio

from rillet.broker.cluster.metadata_view import MetadataView
from rillet.broker.config import ReplicationConfig
from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.broker.replica.replica_manager import ReplicaManager
from rillet.broker.replica.replica_role import FetchApplied
from rillet.broker.replica.replication.fetch_round import (
    FetchRound,
    RoundOutcome,
    next_fetch,
)
from rillet.broker.replica.replication.fetch_session import FollowerFetchSession, partition_limit
from rillet.broker.replica.replication.followed_positions import FollowedPositions, SentPosition
from rillet.broker.replica.replication.follower_apply import apply_answer
from rillet.broker.replica.replication.throttled_replicas import ThrottledReplicas
from rillet.broker.runtime.loop_slices import TimeSlicer
from rillet.client.connection import BrokerConnection
from rillet.client.errors import RilletError
from rillet.wire.error_codes import ErrorCode
from rillet.wire.frame import blob_length
from rillet.wire.messages import FetchPartition, FetchPartitionResponse, FetchRequest

log = logging.getLogger(__name__)

# A follower's fetch is answered as soon as any partition has records for it.
FETCH_MIN_BYTES = 1


class ReplicaFetcherManager:
    def __init__(
        self,
        node_id: int,
        replicas: ReplicaManager,
        metadata: MetadataView,
        config: ReplicationConfig,
        request_timeout_s: float,
        routes: Mapping[int, tuple[str, int]] | None = None,
        tls: Callable[[], ssl.SSLContext | None] = lambda: None,
    ) -> None:
        """``tls``: the context for connections to leaders (None: plaintext)."""
        self._node_id = node_id
        self._tls = tls
        # Voters are reached at the listener this node's config names for them (normally
        # their registered address; the chaos harness routes each link through a proxy).
        self._routes = dict(routes or {})
        self._replicas = replicas
        self._metadata = metadata
        self._config = config
        self._request_timeout_s = request_timeout_s
        self._loops: set[int] = set()
        self._by_leader: dict[int, list[PartitionReplica]] = {}  # followed, by leader
        self._nursery: trio.Nursery | None = None
        self._changed = trio.Event()
        self._generation = 0  # reconciliations so far: a loop rebuilds its positions after one
        self.throttle = ThrottledReplicas(node_id, leader=False)

    async def run(self) -> None:
        """Host the fetch loops (cancel to stop them)."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            try:
                self.reconcile()
                await trio.sleep_forever()
            finally:
                # Shutting down: ending loops must not start new ones (each would be
                # cancelled at once and start another, and the nursery would never close).
                self._nursery = None

    def reconcile(self) -> None:
        """Group the followed replicas by leader (roles changed) and start a loop for every
        leader this node follows a partition of."""
        self._changed.set()
        self._changed = trio.Event()
        self._generation += 1
        by_leader: dict[int, list[PartitionReplica]] = {}
        for replica in self._replicas.replicas():
            role = replica.role
            if replica.deleted or role is None or role.is_leader or role.leader_id < 0:
                continue
            by_leader.setdefault(role.leader_id, []).append(replica)
        self._by_leader = by_leader
        if self._nursery is None:
            return
        for leader_id in by_leader:
            if leader_id not in self._loops and self._followed(leader_id):
                self._loops.add(leader_id)
                self._nursery.start_soon(self._fetch_loop, leader_id)

    def _followed(self, leader_id: int) -> list[PartitionReplica]:
        """The replicas to fetch from ``leader_id`` this round: those grouped under it at the
        last :meth:`reconcile` (a role changes only through one), less any deleted, moved or
        damaged since (no fetch between finding damage and cutting it: replica_repair).
        Cheaper than scanning every hosted replica each round."""
        out = []
        for replica in self._by_leader.get(leader_id, ()):
            role = replica.role
            if (
                replica.deleted
                or role is None
                or role.is_leader
                or role.leader_id != leader_id
                or replica.damage is not None
            ):
                continue
            out.append(replica)
        return out

    # -- one leader -------------------------------------------------------------------------

    async def _fetch_loop(self, leader_id: int) -> None:
        conn: BrokerConnection | None = None
        endpoint: tuple[str, int] | None = None
        limit = partition_limit(self._config.fetch_max_partitions)
        session = FollowerFetchSession(limit)
        positions = FollowedPositions(self._config.fetch_partition_max_bytes)
        paused: set[tuple[str, int]] = set()  # throttled partitions left out of the last fetch
        try:
            while self._nursery is not None:
                now_ms = self._replicas.clock.steady_ms()
                if positions.needs_rebuild(self._generation, now_ms):
                    partitions = self._followed(leader_id)
                    if not partitions:
                        break
                    slicer = TimeSlicer()
                    for _ in positions.rebuild_steps(partitions, self._generation, now_ms):
                        await slicer.step()
                broker = self._metadata.state.brokers.get(leader_id)
                if broker is None:
                    await self._wait_for_change(1.0)
                    continue
                target = self._routes.get(leader_id, (broker.host, broker.port))
                if conn is None or conn.closed or endpoint != target:
                    if conn is not None:
                        conn.close()
                    endpoint = target
                    conn = await self._connect(*endpoint)
                    session = FollowerFetchSession(limit)  # one per connection
                    if conn is None:
                        await self._wait_for_change(self._config.fetch_backoff_ms / 1000)
                        continue
                outcome = await self._fetch_once(conn, session, positions, paused)
                step = next_fetch(outcome, self._config.fetch_backoff_ms / 1000)
                if step.reconnect:
                    conn.close()  # reconnect next round (the leader may have moved)
                if step.wait_s is not None:
                    await self._wait_for_change(step.wait_s)
        finally:
            self._loops.discard(leader_id)
            if conn is not None:
                conn.close()
            # Partitions may have moved to this leader again while the loop was ending.
            if self._followed(leader_id) and self._nursery is not None:
                self.reconcile()

    async def _connect(self, host: str, port: int) -> BrokerConnection | None:
        nursery = self._nursery
        if nursery is None:
            return None  # shutting down
        conn = BrokerConnection(
            host, port, client_id=f"rillet-replica-{self._node_id}", ssl_context=self._tls()
        )
        try:
            await conn.connect(nursery, self._request_timeout_s)
            # Leaders serve follower fetches only on a connection authenticated as this node.
            await self._metadata.auth.authenticate(conn, self._node_id, self._request_timeout_s)
        except RilletError as exc:
            log.debug("cannot reach %s:%d for replication: %s", host, port, exc)
            conn.close()
            return None
        return conn

    async def _wait_for_change(self, timeout_s: float) -> None:
        with trio.move_on_after(timeout_s):
            await self._changed.wait()

    async def _fetch_once(
        self,
        conn: BrokerConnection,
        session: FollowerFetchSession,
        positions: FollowedPositions,
        paused: set[tuple[str, int]],
    ) -> RoundOutcome:
        """One fetch round trip: progress, only error answers (back off and fetch again on
        the same connection), or a broken connection. The fetch names only the partitions
        whose position changed since the last answer on this connection (fetch_session),
        found among those this loop applied answers to (followed_positions)."""
        cfg = self._config
        throttled, wait_ms = self._throttled(positions)
        now_paused = throttled if wait_ms > 0 else set()
        if now_paused and len(now_paused) == len(positions.positions):
            await self._wait_for_change(wait_ms / 1000)  # nothing else to fetch: wait it out
            return RoundOutcome.PROGRESS
        slicer = TimeSlicer()
        moved = positions.take_moved_keys()
        await _flush_before_fetch(
            [s.replica for k, s in positions.sent.items() if moved is None or k in moved]
        )
        for key in moved or ():
            positions.recompute(key)
            await slicer.step()
        current: dict[tuple[str, int], FetchPartition] = positions.positions
        if now_paused:
            current = {k: p for k, p in current.items() if k not in now_paused}
        if throttled and len(throttled) > len(now_paused):
            chunk = self.throttle.gate.chunk_bytes
            current = {
                k: replace(p, partition_max_bytes=chunk(p.partition_max_bytes))
                if k in throttled
                else p
                for k, p in current.items()
            }
        if now_paused != paused:
            moved = None  # partitions leave or rejoin the session: compare them all
            paused.clear()
            paused.update(now_paused)
        incremental, named, forgotten = session.request(current, moved)
        sent = positions.sent  # as of this request (recomputed only before the next one)
        wait_max_ms = min(cfg.fetch_wait_max_ms, wait_ms) if now_paused else cfg.fetch_wait_max_ms
        request = FetchRequest(
            0 if session.more_to_name else wait_max_ms,  # the rest come next
            FETCH_MIN_BYTES,
            cfg.fetch_response_max_bytes,
            named,
            replica_id=self._node_id,
            replica_auth=self._metadata.auth.token,
            incremental=incremental,
            forgotten=forgotten,
        )
        try:
            response = await conn.request(
                request, self._request_timeout_s + cfg.fetch_wait_max_ms / 1000
            )
        except RilletError as exc:
            log.debug("replica fetch failed: %s", exc)
            return RoundOutcome.BROKEN
        if response.error_code != ErrorCode.NONE:
            log.info("replica fetch: %s; starting a new fetch session", response.error_code)
            session.reset()
            return RoundOutcome.ERRORS
        session.answered()
        fetch_round = FetchRound(len(response.partitions))
        slicer = TimeSlicer()
        if throttled:
            now_ms = self._replicas.clock.now_ms()
            for answer in response.partitions:
                if (answer.topic, answer.partition) in throttled:
                    self.throttle.gate.charge(blob_length(answer.records), now_ms)
        for answer in response.partitions:
            # Hundreds of answers, a write each: let other tasks run between slices (each
            # apply checks the state it was sent in, as for an answer that arrived later).
            await slicer.step()
            key = (answer.topic, answer.partition)
            s = sent.get(key)
            if s is None:
                continue
            if s.replica.damage is not None:
                positions.invalidate()  # no fetch between finding damage and its repair
                continue
            applied = self._apply(s, answer)
            positions.mark_moved(key)
            if applied is FetchApplied.STALE:
                session.ask_again(key)
            fetch_round.applied(applied)
        return fetch_round.outcome

    def _throttled(self, positions: FollowedPositions) -> tuple[set[tuple[str, int]], int]:
        """The followed partitions the follower throttle covers now, and how long they must
        sit out (0: they may be fetched)."""
        state = self._metadata.state
        now_ms = self._replicas.clock.now_ms()
        if not self.throttle.refresh(state, now_ms):
            return set(), 0
        covers = self.throttle.covers
        throttled = {k for k in positions.positions if covers(state, k[0], k[1], self._node_id)}
        return throttled, self.throttle.gate.wait_ms(now_ms) if throttled else 0

    def _apply(self, s: SentPosition, answer: FetchPartitionResponse) -> FetchApplied:
        """What the answer did to this partition (BACK_OFF: wait before the next fetch)."""
        done = apply_answer(s, answer, self._replicas.clock.now_ms())
        if done.refused is not None:
            log.error("replicating %s failed: %s", s.replica.key, done.refused)
        return done.applied


async def _flush_before_fetch(replicas: list[PartitionReplica]) -> None:
    """fsync what followers of topics with a flush policy appended, before the fetch that
    reports it: with ``flush.ms`` or ``flush.messages`` set, an acknowledged (acks=all)
    record is then on the disk of every in-sync replica, not only the leader's, and
    survives a power cut of every node at once (docs/guarantees.md)."""
    plans = []
    for replica in replicas:
        if replica.follower_flush_due():
            plan = replica.log.flush_plan()
            if plan is not None:
                plans.append((replica, plan))
    if not plans:
        return

    def run_all() -> None:
        try:
            for _, plan in plans:
                plan.run()
        finally:
            for _, plan in plans:
                plan.discard()  # a plan that did not run (an fsync failed before it)

    try:
        await trio.to_thread.run_sync(run_all)
    except OSError as exc:
        # As for the leader's flushes (replica_manager): what is on disk is unknown after a
        # failed fsync; stop rather than report offsets that may not be durable.
        log.critical("fsync of a followed partition failed, stopping the node: %s", exc)
        raise
    for replica, plan in plans:
        replica.flush_done(plan)
