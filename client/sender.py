"""The producer's background sender: ready batches -> Produce requests -> completed batches.

One task loops over the accumulator: it expires batches past their delivery timeout, groups
the ready ones by partition leader, and puts Produce requests on each leader's connection,
keeping at most ``max_in_flight`` requests in flight per node. Each request carries at most
one batch per partition. The loop itself submits the requests (``BrokerConnection.submit``
never waits), so they leave in the order the batches were drained: without errors, a
partition's batches are appended in ``send`` order however many requests are in flight. A
task per request then waits for the answer and completes its batches, or puts retriable
failures back at the front of their partition's queue with exponential backoff (asking for a
metadata refresh first when the error says the leader moved); every batch ends by
``delivery_timeout_ms`` or ``retries``. Connections are opened by separate tasks, so a node
that is slow to connect holds up only its own partitions. A request that waits on a leader
the metadata no longer names (a paused or cut-off node answers nothing) has its batches
taken back and sent to the new leader unchanged (leader_watch.py).

How many batches of one partition may be in flight at once:

* idempotent producers: up to ``max_in_flight``, at most 5 (the leader remembers each
  producer's last 5 batches per partition, Kafka's bound), once the partition's current
  leader has acknowledged a batch of the current producer id (one at a time before: a
  leader takes a producer's first batch at any sequence). Order survives retries: a batch
  put back goes before every batch of its partition sent after it
  (``RecordAccumulator.requeue``), and the batches sent after a failed one, which the leader
  refuses as OUT_OF_ORDER_SEQUENCE because their predecessor is missing, are put back behind
  it rather than failed. A refusal with no earlier batch outstanding is a real gap and fails
  the batch (or, when the producer id was replaced meanwhile, numbers it anew).
* ``max_in_flight == 1``: one, so retries cannot reorder records (Kafka's guarantee for
  ``max.in.flight.requests.per.connection=1``).
* otherwise no bound per partition (only ``max_in_flight`` requests per node).
"""

from __future__ import annotations

import logging
import random
from collections import defaultdict
from collections.abc import Callable
from functools import partial

import trio

from rillet.client.accumulator import TP, ProducerBatch, RecordAccumulator
from rillet.client.cluster import ClusterClient
from rillet.client.connection import BrokerConnection, PendingResponse
from rillet.client.errors import (
    BrokerError,
    ClientClosedError,
    ClientTimeoutError,
    ConnectionFailedError,
    RilletError,
    UnknownServerError,
    error_for,
)
from rillet.client.idempotence import IdempotenceState
from rillet.client.leader_watch import LeaderMovedError
from rillet.client.transaction_state import TransactionManager
from rillet.client.types import TopicPartition
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import (
    InitProducerIdRequest,
    ProducePartitionData,
    ProduceRequest,
    ProduceResponse,
)

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 8 * 1024 * 1024
# Batches of one partition an idempotent producer keeps in flight at most: the leader keeps
# each producer's last 5 batches per partition to recognise retries, so up to 5 (Kafka's
# limit too). Their order holds through retries, leader moves and producer id changes:
# retried batches go back in their place (accumulator.requeue), a batch refused as out of
# sequence behind an unanswered one goes again (_out_of_turn), and no batch is numbered
# under a new producer id while one numbered under the old id is still in flight
# (_behind_old_producer).
# A partition's leader that does not know the producer yet accepts any sequence, so a
# second batch could be written before a first one that failed retriably: one batch at a
# time until the partition's current leader has acknowledged one of the current producer
# id (IdempotenceState.confirmed_by).
MAX_IDEMPOTENT_IN_FLIGHT = 5
# Answers to a Produce that prove the leader wrote nothing of the batch: refused before the
# append. Any other ending of an attempt (an error found after appending, a timeout, no
# answer) leaves the batch maybe written (ProducerBatch.maybe_written).
NOT_WRITTEN_CODES = frozenset(
    {
        ErrorCode.OUT_OF_ORDER_SEQUENCE,
        ErrorCode.NOT_ENOUGH_REPLICAS,
        ErrorCode.INVALID_PRODUCER_EPOCH,
    }
)
# Extra time to wait for a response beyond the request timeout given to the node, so the
# node's own REQUEST_TIMED_OUT answer (retriable, precise) normally arrives first.
RESPONSE_GRACE_S = 1.0
# With nothing scheduled, the loop still looks around this often (a safety net: every state
# change that matters wakes the accumulator's wait_for_work).
IDLE_WAKEUP_S = 1.0


class Sender:
    """Drains ``acc`` to the cluster; ``run`` is the task, ``nursery`` hosts requests."""

    def __init__(
        self,
        acc: RecordAccumulator,
        cluster: ClusterClient,
        *,
        acks: int,
        request_timeout_ms: int,
        max_in_flight: int,
        retries: int,
        retry_backoff_s: float,
        retry_backoff_max_s: float,
        rng: random.Random,
        on_metadata: Callable[[], None],
        max_request_bytes: int = MAX_REQUEST_BYTES,
        idempotence: IdempotenceState | None = None,
        transaction: TransactionManager | None = None,
    ) -> None:
        self._acc = acc
        self._cluster = cluster
        self._acks = acks
        self._request_timeout_ms = request_timeout_ms
        self._max_in_flight = max_in_flight
        self._retries = retries
        self._backoff_s = retry_backoff_s
        self._backoff_max_s = retry_backoff_max_s
        self._rng = rng
        self._on_metadata = on_metadata
        self._max_request_bytes = max_request_bytes
        self._in_flight: dict[int, int] = defaultdict(int)
        # Produce requests put on the wire and the batches they carried (retries included):
        # how well records were batched (Kafka's producer reports the same as
        # request-total and batch-size-avg).
        self.requests_sent = 0
        self.batches_sent = 0
        self._partition_limit: int | None = (
            min(max_in_flight, MAX_IDEMPOTENT_IN_FLIGHT)
            if idempotence is not None
            else (1 if max_in_flight == 1 else None)
        )
        self._drain_start: dict[int, int] = defaultdict(int)
        self._connecting: set[int] = set()
        self._refreshing = False
        self._next_refresh_s = 0.0
        self._closed = False
        self._nursery: trio.Nursery | None = None
        self._idempotence = idempotence
        # A transactional producer: batches carry its id, a failed batch fails the
        # transaction (it must be aborted) instead of resetting the producer id.
        self._txn = transaction
        self._transactional_id = transaction.transactional_id if transaction else None

    # -- main loop ------------------------------------------------------------------------

    async def run(self, nursery: trio.Nursery) -> None:
        self._nursery = nursery
        acc = self._acc
        while True:
            acc.start_round()  # from now on, a change wakes the wait below
            now = trio.current_time()
            for batch in acc.expired(now):
                self._finish(batch, _expired(batch, "while waiting to be sent"))
            ready, wake_at = acc.ready(now, self._full_partitions())
            idem = self._idempotence
            if ready and idem is not None and not idem.has_producer_id:
                if self._txn is None:  # a transactional id comes from its coordinator
                    self._ensure_producer_id()
                ready = []  # nothing leaves before the batches can carry a producer id
            by_leader: dict[int, list[TP]] = defaultdict(list)
            leaderless = False
            for tp in ready:
                leader = self._cluster.leader_for(tp)
                if leader is None:
                    leaderless = True
                else:
                    by_leader[leader].append(tp)
            if leaderless:
                self.request_metadata()
                wake_at = min(wake_at or now + self._backoff_s, now + self._backoff_s)
            for leader, tps in by_leader.items():
                conn = self._cluster.live_connection(leader)
                if conn is None:
                    self._connect(leader, tps)
                    continue
                while self._in_flight[leader] < self._max_in_flight:
                    batches = self._drain(leader, tps, now)
                    if not batches:
                        break
                    self._submit(leader, conn, batches)
            timeout = IDLE_WAKEUP_S if wake_at is None else max(wake_at - now, 0.0)
            await acc.wait_for_work(timeout)

    def _drain(self, leader: int, tps: list[TP], now: float) -> list[ProducerBatch]:
        """At most one batch per partition, within the request size limit.

        The scan starts where the previous request of this leader stopped, so under a size
        limit every partition gets its turn.
        """
        out: list[ProducerBatch] = []
        total = 0
        n = len(tps)
        start = self._drain_start[leader] % n if n else 0
        for i in range(n):
            tp = tps[(start + i) % n]
            queue = self._acc.queues.get(tp)
            if not queue or self._full(tp) or not self._acc.sendable(queue[0], now):
                continue
            head = queue[0]
            if self._behind_old_producer(head):
                continue
            size = head.size
            if out and total + size > self._max_request_bytes:
                self._drain_start[leader] = start + i
                break
            if self._idempotence is not None:
                self._idempotence.stamp(head)  # before pop() closes and encodes it
                head.sent_behind = any(
                    head.drain_order < 0 or b.drain_order < head.drain_order
                    for b in self._acc.in_flight.get(tp, ())
                )
            batch = self._acc.pop(tp)
            out.append(batch)
            total += size
        return out

    @property
    def in_flight_batches(self) -> list[ProducerBatch]:
        """Every batch taken for sending and not yet answered, finished or put back."""
        return [b for batches in self._acc.in_flight.values() for b in batches]

    def _behind_old_producer(self, batch: ProducerBatch) -> bool:
        """``batch`` would be numbered under the current producer id while a batch of its
        partition numbered under a replaced one is in flight. It waits: the older batch may
        still be written under its old numbers, or be refused and numbered again, and
        either way it must land first (else a later record is written before it)."""
        idem = self._idempotence
        if idem is None or (batch.encoded is not None and not batch.restamp):
            return False  # not idempotent, or a retry keeping the numbers it was sent with
        return any(
            b.builder.producer_id != idem.producer_id
            for b in self._acc.in_flight.get((batch.topic, batch.partition), ())
        )

    def _ensure_producer_id(self) -> None:
        idem = self._idempotence
        if idem is None or idem.requesting or self._closed or self._nursery is None:
            return
        idem.requesting = True
        self._nursery.start_soon(self._init_producer_id, idem)

    async def _init_producer_id(self, idem: IdempotenceState) -> None:
        try:
            response = await self._cluster.request_any(
                InitProducerIdRequest(), self._request_timeout_ms / 1000
            )
            if response.error_code != ErrorCode.NONE:
                raise error_for(response.error_code, response.error_message or "InitProducerId")
            idem.assign(response.producer_id, response.producer_epoch)
        except RilletError as exc:
            log.debug("no producer id yet: %s", exc)
            await trio.sleep(self._backoff_s)
        finally:
            idem.requesting = False
            self._acc.wake()

    # -- metadata -------------------------------------------------------------------------

    def request_metadata(self) -> None:
        """Refresh metadata in the background: at most one refresh at a time, and not more
        often than once per ``retry_backoff_ms``."""
        if self._refreshing or self._closed or self._nursery is None:
            return
        self._refreshing = True
        self._nursery.start_soon(self._refresh)

    async def _refresh(self) -> None:
        try:
            await trio.sleep_until(self._next_refresh_s)
            topics = list(self._acc.open)
            if topics:
                await self._cluster.refresh_metadata(topics)
                self._on_metadata()
        except RilletError as exc:
            log.debug("metadata refresh failed: %s", exc)
        finally:
            self._next_refresh_s = trio.current_time() + self._backoff_s
            self._refreshing = False
            self._acc.wake()

    # -- requests -------------------------------------------------------------------------

    def _connect(self, leader: int, tps: list[TP]) -> None:
        """Open the connection to ``leader`` in the background (one attempt at a time)."""
        if leader in self._connecting or self._nursery is None:
            return
        self._connecting.add(leader)
        self._nursery.start_soon(self._open_connection, leader, tps)

    async def _open_connection(self, leader: int, tps: list[TP]) -> None:
        try:
            await self._cluster.connection(leader)
        except RilletError as exc:
            log.debug("cannot connect to node %d: %s", leader, exc)
            # The node may be gone: look the leaders up again, and back off the batches
            # (they still expire after delivery_timeout_ms).
            retry_at = trio.current_time() + self._backoff_s
            for tp in tps:
                self._cluster.metadata.mark_stale(TopicPartition(*tp))
                queue = self._acc.queues.get(tp)
                if queue:
                    queue[0].retry_at_s = max(queue[0].retry_at_s, retry_at)
            self.request_metadata()
        finally:
            self._connecting.discard(leader)
            self._acc.wake()

    def _submit(self, leader: int, conn: BrokerConnection, batches: list[ProducerBatch]) -> None:
        """Put one Produce request on the wire now, and a task to wait for its answer."""
        request = ProduceRequest(
            self._acks,
            self._request_timeout_ms,
            [ProducePartitionData(b.topic, b.partition, b.encode()) for b in batches],
            self._transactional_id,
        )
        try:
            if self._acks == 0:
                waiting: PendingResponse[ProduceResponse] | trio.Event = conn.submit_no_response(
                    request
                )
            else:
                waiting = conn.submit(request)
        except RilletError as exc:  # the connection just closed
            self._handle_errors(batches, exc, refresh=True)
            return
        assert self._nursery is not None
        self._in_flight[leader] += 1
        self.requests_sent += 1
        self.batches_sent += len(batches)
        self._nursery.start_soon(self._complete, leader, conn, batches, waiting)

    async def _complete(
        self,
        leader: int,
        conn: BrokerConnection,
        batches: list[ProducerBatch],
        waiting: PendingResponse[ProduceResponse] | trio.Event,
    ) -> None:
        live = list(batches)  # the batches this request still answers for
        token: int | None = None
        try:
            if isinstance(waiting, trio.Event):  # acks=0: written is all we learn
                await waiting.wait()
                if conn.closed:
                    self._handle_errors(
                        live, ConnectionFailedError(f"connection to {conn.address} closed"), True
                    )
                    return
                for b in live:
                    self._finish(b, None)
                return
            with trio.CancelScope() as scope:
                # Abandon batches whose leader moved while the request waits (a paused or
                # cut-off node answers nothing): they go to the new leader at once.
                token = self._cluster.watch_request(
                    leader,
                    [(b.topic, b.partition) for b in batches],
                    partial(self._leader_moved, live, scope),
                )
                await self._await_answer(conn, live, waiting, leader)
        finally:
            if token is not None:
                self._cluster.unwatch(token)
            self._in_flight[leader] -= 1
            self._acc.wake()

    async def _await_answer(
        self,
        conn: BrokerConnection,
        live: list[ProducerBatch],
        waiting: PendingResponse[ProduceResponse],
        leader: int,
    ) -> None:
        try:
            response: ProduceResponse = await conn.wait_for(
                waiting, self._request_timeout_ms / 1000 + RESPONSE_GRACE_S
            )
        except (ConnectionFailedError, ClientTimeoutError) as exc:
            self._handle_errors(list(live), exc, refresh=True)
        except BrokerError as exc:  # a top-level error: the request was not understood
            self._handle_errors(list(live), exc, refresh=exc.needs_metadata_refresh)
        except ClientClosedError as exc:
            # Our own metadata refresh closed the connection (the broker left the
            # metadata: fenced, or cut off): the batches go to the new leader. A closing
            # producer fails them instead (_retry_or_fail sees _closed).
            self._handle_errors(list(live), exc, refresh=True)
        except RilletError as exc:
            for b in list(live):
                self._finish(b, exc)
        else:
            self._handle_response(list(live), response, leader)

    def _leader_moved(
        self, live: list[ProducerBatch], scope: trio.CancelScope, tps: list[TP]
    ) -> None:
        """The metadata names a new leader for ``tps`` while their request is in flight:
        put their batches back at the front of their partitions' queues, unchanged (an
        idempotent batch keeps its producer id, epoch and sequence, so the new leader
        writes it at most once), to be sent to the new leader now, each in its place
        among its partition's batches (``requeue``)."""
        moved = set(tps)
        now = trio.current_time()
        for b in [b for b in live if (b.topic, b.partition) in moved]:
            live.remove(b)
            b.maybe_written = True  # the old leader may have appended it before it stalled
            if self._closed:
                self._finish(b, LeaderMovedError(f"{b.topic}-{b.partition}: leader moved"))
            else:
                log.info("leader of %s-%s moved: resending its batch", b.topic, b.partition)
                self._acc.requeue(b, now)
        if not live:
            scope.cancel()  # nothing left to wait for on the old leader
        self._acc.wake()

    def _handle_response(
        self, batches: list[ProducerBatch], response: ProduceResponse, leader: int
    ) -> None:
        results = {(r.topic, r.partition): r for r in response.partitions}
        idem = self._idempotence
        refresh = False
        for b in batches:
            r = results.get((b.topic, b.partition))
            if r is None:
                self._finish(
                    b, UnknownServerError(f"response did not mention {b.topic}-{b.partition}")
                )
                continue
            if r.error_code == ErrorCode.NONE:
                if idem is not None:
                    idem.confirm(b, leader)
                self._finish(b, None, r.base_offset, r.log_append_time_ms)
                continue
            if r.error_code not in NOT_WRITTEN_CODES:
                b.maybe_written = True
            err = error_for(r.error_code, r.error_message or f"{b.topic}-{b.partition}")
            if r.error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE and self._out_of_turn(b):
                self._retry_or_fail(b, err)
                continue
            if err.needs_metadata_refresh:
                self._cluster.metadata.mark_stale(TopicPartition(b.topic, b.partition))
                refresh = True
            if err.retriable:
                self._retry_or_fail(b, err)
            else:
                self._finish(b, err)
        if refresh:
            self.request_metadata()

    def _full(self, tp: TP) -> bool:
        """The partition has as many batches in flight as it may."""
        limit = self._limit_for(tp)
        return limit is not None and len(self._acc.in_flight.get(tp, ())) >= limit

    def _full_partitions(self) -> set[TP]:
        if self._partition_limit is None:
            return set()
        return {
            tp
            for tp, batches in self._acc.in_flight.items()
            if len(batches) >= (self._limit_for(tp) or 0)
        }

    def _limit_for(self, tp: TP) -> int | None:
        """Batches of ``tp`` that may be in flight: an idempotent producer's pipeline opens
        once the partition's current leader has acknowledged one of its batches."""
        limit = self._partition_limit
        idem = self._idempotence
        if limit is None or limit == 1 or idem is None:
            return limit
        confirmed = idem.confirmed_by(tp)
        if confirmed is None or confirmed != self._cluster.leader_for(tp):
            return 1
        return limit

    def _out_of_turn(self, batch: ProducerBatch) -> bool:
        """A batch refused as OUT_OF_ORDER_SEQUENCE (so not written) that may go again: it
        was sent while an earlier batch of its partition was unanswered, or one still is in
        flight or waiting for its retry (the leader lacked it when this one arrived), or the
        producer id was replaced since the batch was numbered, and it cannot be an old batch
        already written that the leader has moved past (it is numbered anew). Otherwise the
        gap is real, or the batch may be written already, and it fails."""
        tp = (batch.topic, batch.partition)
        if batch.sent_behind:
            return True
        earlier = [
            b
            for b in (*self._acc.in_flight.get(tp, ()), *self._acc.queues.get(tp, ()))
            if b is not batch and b.drain_order >= 0
        ]
        if any(b.drain_order < batch.drain_order for b in earlier):
            return True
        idem = self._idempotence
        if idem is None or batch.builder.producer_id == idem.producer_id:
            return False
        if batch.maybe_written and idem.numbered_after(batch):
            # An earlier attempt may have been written, and later batches behind it since
            # (the leader keeps only a producer's last 5): "out of sequence" may mean too
            # old, not missing. Numbered anew it would be written twice and out of order
            # (disk-full seed 1 of the chaos sweep); its outcome stays unknown instead.
            return False
        batch.restamp = True
        return True

    def _handle_errors(
        self, batches: list[ProducerBatch], error: RilletError, refresh: bool
    ) -> None:
        retriable = not isinstance(error, BrokerError) or error.retriable
        for b in batches:
            b.maybe_written = True  # no answer for it: the leader may have appended it
            if retriable:
                self._retry_or_fail(b, error)
            else:
                self._finish(b, error)
        if refresh:
            self.request_metadata()

    def _retry_or_fail(self, batch: ProducerBatch, error: BaseException) -> None:
        now = trio.current_time()
        backoff = min(self._backoff_s * 2**batch.attempts, self._backoff_max_s)
        backoff *= self._rng.uniform(0.8, 1.2)  # jitter: clients do not retry in lockstep
        if self._closed or batch.attempts >= self._retries:
            self._finish(batch, error)
        elif now + backoff >= batch.deadline_s:
            self._finish(batch, _expired(batch, f"after {batch.attempts + 1} attempts: {error}"))
        else:
            log.debug("retrying %s-%s in %.3fs: %s", batch.topic, batch.partition, backoff, error)
            self._acc.requeue(batch, now + backoff)

    def _finish(
        self,
        batch: ProducerBatch,
        error: BaseException | None,
        base_offset: int = -1,
        log_append_time_ms: int = -1,
    ) -> None:
        self._acc.release(batch)
        if error is None:
            batch.complete(base_offset, log_append_time_ms)
        else:
            if self._txn is not None:
                self._txn.batch_failed(error)
            elif self._idempotence is not None:
                # Whether the leader wrote it is unknown: later batches of this partition
                # cannot continue its sequence. Start over under a fresh producer id.
                self._idempotence.reset()
            batch.fail(error)

    def fail_all(self, error: RilletError) -> None:
        """Fail every batch not completed yet (the producer is closing)."""
        self._closed = True
        for batch in self._acc.drain_all() + list(self.in_flight_batches):
            if not batch.done.is_set():
                self._finish(batch, error)


def _expired(batch: ProducerBatch, when: str) -> ClientTimeoutError:
    return ClientTimeoutError(
        f"{batch.count} record(s) for {batch.topic}-{batch.partition} expired {when}: "
        "delivery_timeout_ms passed"
    )
