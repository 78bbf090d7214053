"""Fetching: one task per leader node, one Fetch request at a time for all its partitions.

A partition is fetched again as soon as the application has taken its buffered records, so
the next response is on its way while the application processes the current one (prefetch).
Partitions that had reached their end wait for that next fetch rather than long-polling alone
while the application still drains the others (``hold_idle_fetch``).
A fetch waiting on a node after the metadata named another leader for one of its partitions
is abandoned at once (see leader_watch.py): a paused leader holds its partitions up only
until the controller replaces it. Per-partition errors are sorted here: a stale leader marks
the metadata stale and asks the consumer's maintenance task to refresh it (the partition
moves to its new leader's fetcher);
an out-of-range offset asks for a reset; other retriable errors back off; anything else is
kept for ``poll`` to raise.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import trio

from rillet.client.cluster import ClusterClient
from rillet.client.errors import (
    BrokerError,
    ClientClosedError,
    ClientTimeoutError,
    ConnectionFailedError,
    OffsetOutOfRangeError,
    RilletError,
    error_for,
)
from rillet.client.fetch_decoder import decode_record_columns
from rillet.client.leader_watch import LeaderMovedError
from rillet.client.subscription import PartitionState, Subscription
from rillet.client.types import TopicPartition
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import (
    READ_COMMITTED,
    READ_UNCOMMITTED,
    FetchPartition,
    FetchPartitionResponse,
    FetchRequest,
    FetchResponse,
)

log = logging.getLogger(__name__)


def caught_up(state: PartitionState) -> bool:
    """The partition's last fetch found nothing past its fetch offset (at the time)."""
    return state.fetch_offset is not None and 0 <= state.high_watermark <= state.fetch_offset


def hold_idle_fetch(fetchable: list[PartitionState], draining: bool) -> bool:
    """Whether to hold back a fetch of only caught-up partitions while others drain.

    Such a fetch long-polls for ``fetch_max_wait_ms`` on the node, and a node has one fetch
    in flight at a time: the partitions whose records the application is still taking
    could not be fetched again until it ends, so one consumer over many partitions stalled
    for the whole wait each time some partitions reached their end before others. Held
    back, the caught-up partitions go with the drained ones in the next fetch (the next
    ``poll`` wakes the loop), which the node answers at once since those have data.
    """
    return draining and bool(fetchable) and all(caught_up(s) for s in fetchable)


class FetchConfig:
    __slots__ = (
        "backoff_s",
        "check_crcs",
        "max_bytes",
        "max_wait_ms",
        "min_bytes",
        "partition_max_bytes",
        "read_committed",
        "request_timeout_s",
        "reset_policy",
    )

    def __init__(
        self,
        *,
        max_wait_ms: int,
        min_bytes: int,
        max_bytes: int,
        partition_max_bytes: int,
        check_crcs: bool,
        request_timeout_s: float,
        backoff_s: float,
        reset_policy: int | None,
        read_committed: bool = False,
    ) -> None:
        self.max_wait_ms = max_wait_ms
        self.min_bytes = min_bytes
        self.max_bytes = max_bytes
        self.partition_max_bytes = partition_max_bytes
        self.check_crcs = check_crcs
        self.request_timeout_s = request_timeout_s
        self.backoff_s = backoff_s
        self.reset_policy = reset_policy
        self.read_committed = read_committed  # isolation_level="read_committed"


class Fetcher:
    """Runs the fetch loops; ``on_data`` wakes ``poll``, ``on_attention`` the maintenance."""

    def __init__(
        self,
        cluster: ClusterClient,
        subscription: Subscription,
        config: FetchConfig,
        on_data: Callable[[], None],
        on_attention: Callable[[], None],
    ) -> None:
        self._cluster = cluster
        self._sub = subscription
        self._cfg = config
        self._on_data = on_data
        self._on_attention = on_attention
        self._work: dict[int, trio.Event] = {}  # leader -> wake-up of its loop
        self._rotation = 0
        # Errors for poll to raise, at most one pending per partition (or node): a partition
        # that keeps failing while nobody polls does not pile up copies.
        self._errors: dict[object, RilletError] = {}

    def report(self, where: object, error: RilletError) -> None:
        """Keep ``error`` (about a partition or node ``where``) for the next poll."""
        self._errors.setdefault(where, error)

    def clear_error(self, where: object) -> None:
        """Forget a pending error (the application moved the partition's position)."""
        self._errors.pop(where, None)

    def pop_error(self) -> RilletError | None:
        """The oldest error not raised yet, if any."""
        if not self._errors:
            return None
        return self._errors.pop(next(iter(self._errors)))

    def kick(self) -> None:
        """Partitions may have become fetchable: every loop looks again."""
        for event in self._work.values():
            event.set()

    def ensure_loops(self, nursery: trio.Nursery) -> None:
        """One loop per node that leads an assigned partition."""
        for tp in self._sub.states:
            leader = self._cluster.leader_for(tp)
            if leader is not None and leader not in self._work:
                self._work[leader] = trio.Event()
                nursery.start_soon(self._loop, leader)

    def _fetchable(
        self, leader: int, now: float
    ) -> tuple[list[tuple[TopicPartition, PartitionState]], float | None]:
        parts = []
        retry_at: float | None = None
        draining = False  # some partition of this node still holds records for poll
        for tp, s in self._sub.states.items():
            if s.fetch_offset is None or s.paused or s.in_flight:
                continue
            if self._cluster.leader_for(tp) != leader:
                continue
            if s.pending:
                draining = True
                continue
            if s.retry_at_s > now:
                retry_at = s.retry_at_s if retry_at is None else min(retry_at, s.retry_at_s)
                continue
            parts.append((tp, s))
        if hold_idle_fetch([s for _, s in parts], draining):
            return [], retry_at  # the next poll's kick sends them with the drained ones
        if parts:
            # Rotate the order: a node fills its byte limit from the first partitions.
            k = self._rotation % len(parts)
            self._rotation += 1
            parts = parts[k:] + parts[:k]
        return parts, retry_at

    async def _loop(self, leader: int) -> None:
        try:
            while True:
                event = self._work[leader] = trio.Event()
                parts, retry_at = self._fetchable(leader, trio.current_time())
                if not parts:
                    with trio.move_on_at(retry_at if retry_at is not None else float("inf")):
                        await event.wait()
                    continue
                try:
                    await self._fetch(leader, parts)
                except LeaderMovedError as exc:
                    # The metadata names new leaders for some of these partitions: their
                    # new leaders' loops take them now; the others are fetched again here.
                    log.info("fetch from node %d abandoned: %s", leader, exc)
                    self._on_attention()
                except ClientClosedError as exc:
                    if self._cluster.closed:
                        return  # the consumer is closing
                    # A metadata refresh closed the connection (the node left the cluster).
                    log.debug("fetch from node %d failed: %s", leader, exc)
                    for tp, _ in parts:
                        self._cluster.metadata.mark_stale(tp)
                    self._on_attention()
                except RilletError as exc:
                    log.debug("fetch from node %d failed: %s", leader, exc)
                    retry_at_s = trio.current_time() + self._cfg.backoff_s
                    for _, s in parts:
                        s.retry_at_s = retry_at_s
                    if isinstance(exc, ConnectionFailedError | ClientTimeoutError):
                        # The node may be gone: look its partitions' leaders up again.
                        for tp, _ in parts:
                            self._cluster.metadata.mark_stale(tp)
                        self._on_attention()
                    elif not isinstance(exc, BrokerError) or not exc.retriable:
                        self.report(leader, exc)
                        self._on_data()
        finally:
            self._work.pop(leader, None)

    async def _fetch(self, leader: int, parts: list[tuple[TopicPartition, PartitionState]]) -> None:
        cfg = self._cfg
        epochs = {tp: s.epoch for tp, s in parts}
        request = FetchRequest(
            cfg.max_wait_ms,
            cfg.min_bytes,
            cfg.max_bytes,
            [
                FetchPartition(
                    tp.topic,
                    tp.partition,
                    s.fetch_offset if s.fetch_offset is not None else 0,
                    cfg.partition_max_bytes,
                    current_leader_epoch=self._cluster.metadata.leader_epoch(tp),
                )
                for tp, s in parts
            ],
            isolation_level=READ_COMMITTED if cfg.read_committed else READ_UNCOMMITTED,
        )
        for _, s in parts:
            s.in_flight = True
        try:
            conn = await self._cluster.connection(leader)
            # Abandoned as soon as the metadata names another leader for one of the
            # partitions (a paused node answers nothing until the request timeout).
            response: FetchResponse = await self._cluster.leader_request(
                conn,
                leader,
                request,
                [tp for tp, _ in parts],
                cfg.request_timeout_s + cfg.max_wait_ms / 1000,
                expected_wait_s=cfg.max_wait_ms / 1000,
            )
        finally:
            for _, s in parts:
                s.in_flight = False
        got_data = False
        for r in response.partitions:
            tp = TopicPartition(r.topic, r.partition)
            state = self._sub.states.get(tp)
            if state is None or state.epoch != epochs.get(tp):
                continue  # unassigned, or seeked while the fetch was in flight
            got_data |= self._handle_partition(tp, state, r)
        if got_data:
            self._on_data()

    def _handle_partition(
        self, tp: TopicPartition, state: PartitionState, r: FetchPartitionResponse
    ) -> bool:
        """Apply one partition's part of the response; True when poll should wake."""
        code = r.error_code
        committed = self._cfg.read_committed
        # A read_committed consumer's end is the last stable offset (as Kafka's).
        state.high_watermark = (
            r.last_stable_offset if committed and r.last_stable_offset >= 0 else r.high_watermark
        )
        state.log_start_offset = r.log_start_offset
        if code == ErrorCode.NONE:
            data = r.records
            if isinstance(data, memoryview) and data.nbytes and state.fetch_offset is not None:
                try:
                    records, next_offset = decode_record_columns(
                        data,
                        tp.topic,
                        tp.partition,
                        state.fetch_offset,
                        self._cfg.check_crcs,
                        r.aborted_transactions if committed else None,
                    )
                except RilletError as exc:
                    self.report(tp, exc)
                    state.retry_at_s = trio.current_time() + self._cfg.backoff_s
                    return True
                state.fetch_offset = next_offset
                if records:
                    self._sub.buffer(tp, state, records)
                    return True
                state.position = next_offset  # nothing buffered: both offsets agree
            return False
        if code == ErrorCode.OFFSET_OUT_OF_RANGE:
            if self._cfg.reset_policy is None:
                self.report(
                    tp,
                    OffsetOutOfRangeError(
                        f"offset {state.fetch_offset} of {tp.topic}-{tp.partition} is outside "
                        f"[{r.log_start_offset}, {r.high_watermark}] and auto_offset_reset=none"
                    ),
                )
                state.retry_at_s = trio.current_time() + self._cfg.backoff_s
                return True
            log.info("offset %s of %s-%s is out of range: resetting", state.fetch_offset, *tp)
            state.request_reset(self._cfg.reset_policy)
            self._on_attention()
            return False
        err = error_for(code, f"fetch from {tp.topic}-{tp.partition}")
        state.retry_at_s = trio.current_time() + self._cfg.backoff_s
        if err.needs_metadata_refresh:
            self._cluster.metadata.mark_stale(tp)
            self._on_attention()
        if not err.retriable:
            self.report(tp, err)
            return True
        return False
