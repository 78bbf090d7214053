"""Reading one bounded offset range ``[start, end)`` of one partition, fetching ahead.

This is the client's primitive for batch reads (Spark tasks, backfills, exports): unlike the
consumer it has no position to keep, no group and no reset policy; it reads exactly the
planned range and says so when some of it cannot be read. A background task sends Fetch
requests to the partition's leader, checks every batch (CRC-32C, structure) and queues whole
responses (``prefetch`` of them), so the next one is on its way while the caller handles the
current one. Reading stops at the planned end: nothing beyond is fetched (the last batch may
hold later records; ``RangeChunk.batches`` still lists it, and the caller cuts it).

What the reader yields, in order: :class:`RangeChunk` (records), :class:`RangeGap` (records
of the range that cannot be read, and where reading resumes), then the end. Gaps are:

* records deleted by retention (the log now starts after them);
* a leader whose log ends below the planned end (an unclean leader change truncated it);
* a leader whose high watermark stays below the planned end for ``retry_timeout_ms`` (a new
  leader that does not catch up).

Failures:

* A fetch waiting on a node after the metadata named a new leader (a paused or cut-off node
  answers nothing) is abandoned and sent to the new leader at once.
* Leader changes, unreachable nodes and other retriable errors: metadata is refreshed and the
  fetch retried with backoff, for at most ``retry_timeout_ms`` without progress; then
  :class:`RetriesExhaustedError`.
* A corrupt batch: CorruptMessageError at once (the stored bytes are bad; retrying cannot
  help).
"""

from __future__ import annotations

import logging
import ssl
from dataclasses import dataclass

import trio

from rillet.client.cluster import ClusterClient
from rillet.client.committed_reads import committed_batches
from rillet.client.errors import (
    BrokerError,
    ClientClosedError,
    ClientTimeoutError,
    ConnectionFailedError,
    LeaderNotAvailableError,
    RetriesExhaustedError,
    error_for,
)
from rillet.client.fetch_decoder import whole_batches
from rillet.client.leader_watch import DEFAULT_LEADER_CHECK_MS, LeaderMovedError
from rillet.client.lifecycle import ClientLifecycle
from rillet.client.sasl import SaslLogin
from rillet.client.types import TopicPartition
from rillet.wire.batch import BatchHeader
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import (
    READ_COMMITTED,
    READ_UNCOMMITTED,
    FetchPartition,
    FetchPartitionResponse,
    FetchRequest,
)

log = logging.getLogger(__name__)

FIRST_BACKOFF_S = 0.05
MAX_BACKOFF_S = 1.0


@dataclass(frozen=True, slots=True)
class RangeChunk:
    """One fetch response's whole batches holding offsets >= ``offset`` (with their byte
    positions in ``data``)."""

    data: bytes | memoryview
    batches: list[tuple[int, BatchHeader]]
    offset: int


@dataclass(frozen=True, slots=True)
class RangeGap:
    """Offsets ``[start, resume_at)`` of the range cannot be read; ``reason`` says why."""

    start: int
    resume_at: int
    reason: str


@dataclass(frozen=True, slots=True)
class RangeReadConfig:
    request_timeout_ms: int = 30_000
    retry_timeout_ms: int = 60_000
    max_partition_fetch_bytes: int = 8 * 1024 * 1024
    fetch_max_wait_ms: int = 500
    # Records of committed transactions only, up to the last stable offset; aborted
    # transactions' batches and markers are left out of the chunks (committed_reads).
    read_committed: bool = False


class RetryBudget:
    """How long the current run of failures (or stall) has lasted, and the backoff."""

    def __init__(self, budget_s: float) -> None:
        self.budget_s = budget_s
        self.failing_since: float | None = None
        self.stalled_since: float | None = None
        self.backoff_s = FIRST_BACKOFF_S

    def ok(self) -> None:
        self.failing_since = None
        self.backoff_s = FIRST_BACKOFF_S

    def moved(self) -> None:
        self.ok()
        self.stalled_since = None

    async def failed(self, what: str, exc: BaseException) -> None:
        """Back off before the next try; raises RetriesExhaustedError once over budget."""
        now = trio.current_time()
        if self.failing_since is None:
            self.failing_since = now
        if now - self.failing_since >= self.budget_s:
            raise RetriesExhaustedError(
                f"{what}: retriable errors for {self.budget_s:.3g}s (retry timeout), last: {exc}"
            ) from exc
        log.info("%s: %s; retrying in %.2fs", what, exc, self.backoff_s)
        await trio.sleep(self.backoff_s)
        self.backoff_s = min(self.backoff_s * 2, MAX_BACKOFF_S)

    def stalled_for(self) -> float:
        now = trio.current_time()
        if self.stalled_since is None:
            self.stalled_since = now
        return now - self.stalled_since


class RangeRead:
    """The fetch loop of one range over a ClusterClient the caller owns."""

    def __init__(self, tp: TopicPartition, start: int, end: int, config: RangeReadConfig) -> None:
        self.tp = tp
        self.start = start
        self.end = end
        self.config = config

    @property
    def name(self) -> str:
        return f"{self.tp.topic}-{self.tp.partition} [{self.start}, {self.end})"

    async def run(
        self, cluster: ClusterClient, send: trio.MemorySendChannel[RangeChunk | RangeGap]
    ) -> None:
        """Send the range's chunks and gaps, in offset order, until its end."""
        tp = self.tp
        offset = self.start
        budget = RetryBudget(self.config.retry_timeout_ms / 1000)
        while offset < self.end:
            where = f"{tp.topic}-{tp.partition} at offset {offset}"
            try:
                r = await self._fetch_once(cluster, offset)
            except LeaderMovedError as exc:
                # The metadata names a new leader while the fetch waited (a paused or cut-off
                # node answers nothing): ask the new leader now, without backing off.
                log.info("%s: %s", where, exc)
                continue
            except (ConnectionFailedError, ClientTimeoutError, LeaderNotAvailableError) as exc:
                cluster.metadata.mark_stale(tp)
                await budget.failed(where, exc)
                await self._refresh(cluster)
                continue
            code = ErrorCode.from_wire(r.error_code)
            gap: RangeGap | None = None
            if code is ErrorCode.NONE:
                budget.ok()
                data = r.records if isinstance(r.records, bytes | memoryview) else b""
                batches, next_offset = whole_batches(data, offset, where)
                if batches:
                    if self.config.read_committed:
                        batches = committed_batches(data, batches, r.aborted_transactions, where)
                    if batches:
                        await send.send(RangeChunk(data, batches, offset))
                    offset = next_offset
                    budget.moved()
                    continue
                gap = self.stall_gap(r, offset, budget)
            elif code is ErrorCode.OFFSET_OUT_OF_RANGE:
                budget.ok()
                gap = self.out_of_range_gap(r, offset)
            else:
                err = error_for(code, f"fetch of {where}")
                if not err.retriable:
                    raise err
                if err.needs_metadata_refresh:
                    cluster.metadata.mark_stale(tp)
                await budget.failed(where, err)
                await self._refresh(cluster)
            if gap is not None:
                await send.send(gap)
                offset = gap.resume_at
                budget.moved()

    async def _refresh(self, cluster: ClusterClient) -> None:
        try:
            await cluster.refresh_metadata([self.tp.topic])
        except (ConnectionFailedError, ClientTimeoutError) as exc:
            log.debug("metadata refresh failed: %s", exc)

    async def _fetch_once(self, cluster: ClusterClient, offset: int) -> FetchPartitionResponse:
        tp, cfg = self.tp, self.config
        leader = cluster.leader_for(tp)
        if leader is None:
            await cluster.refresh_metadata([tp.topic])
            leader = cluster.leader_for(tp)
            if leader is None:
                raise LeaderNotAvailableError(f"no leader known for {tp.topic}-{tp.partition}")
        conn = await cluster.connection(leader)
        request = FetchRequest(
            cfg.fetch_max_wait_ms,
            1,
            cfg.max_partition_fetch_bytes,
            [
                FetchPartition(
                    tp.topic,
                    tp.partition,
                    offset,
                    cfg.max_partition_fetch_bytes,
                    current_leader_epoch=cluster.metadata.leader_epoch(tp),
                )
            ],
            isolation_level=READ_COMMITTED if cfg.read_committed else READ_UNCOMMITTED,
        )
        try:
            response = await cluster.leader_request(
                conn,
                leader,
                request,
                [tp],
                (cfg.request_timeout_ms + cfg.fetch_max_wait_ms) / 1000,
                expected_wait_s=cfg.fetch_max_wait_ms / 1000,
            )
        except BrokerError as exc:  # a top-level error answer
            if exc.retriable:
                raise LeaderNotAvailableError(str(exc)) from exc
            raise
        for p in response.partitions:
            if p.topic == tp.topic and p.partition == tp.partition:
                return p
        raise LeaderNotAvailableError(f"node {leader} did not answer for {tp.topic}-{tp.partition}")

    def out_of_range_gap(self, r: FetchPartitionResponse, offset: int) -> RangeGap:
        """The fetch offset is outside the leader's log: deleted, or beyond a truncated end."""
        tp = f"{self.tp.topic}-{self.tp.partition}"
        if 0 <= offset < r.log_start_offset:
            resume = min(r.log_start_offset, self.end)
            return RangeGap(
                offset,
                resume,
                f"{tp}: offsets {offset}..{resume - 1} of the planned range "
                f"[{self.start}, {self.end}) were deleted (the log now starts at "
                f"{r.log_start_offset})",
            )
        return RangeGap(
            offset,
            self.end,
            f"{tp}: the leader's log ends at {r.log_end_offset}, below offset {offset} of the "
            f"planned range [{self.start}, {self.end}) (an unclean leader change truncated "
            "committed records)",
        )

    def stall_gap(
        self, r: FetchPartitionResponse, offset: int, budget: RetryBudget
    ) -> RangeGap | None:
        """An empty answer below the planned end: the leader's high watermark is below it.
        None while it is worth asking again (the long poll waited already)."""
        tp = f"{self.tp.topic}-{self.tp.partition}"
        if 0 <= r.log_end_offset < self.end and r.log_end_offset <= offset:
            return RangeGap(
                offset,
                self.end,
                f"{tp}: the leader's log ends at {r.log_end_offset}, below the planned end "
                f"{self.end} (an unclean leader change lost committed records)",
            )
        waited = budget.stalled_for()
        if waited >= budget.budget_s:
            return RangeGap(
                offset,
                self.end,
                f"{tp}: the high watermark stayed at {r.high_watermark}, below the planned "
                f"end {self.end}, for {waited:.3g}s (retry timeout)",
            )
        return None


class RangeReader(ClientLifecycle):
    """Async range reader; ``async with RangeReader(...) as reader`` then ``await
    reader.next()`` until it returns None. Closing stops the fetching, also half-way."""

    def __init__(
        self,
        bootstrap: str,
        tp: TopicPartition,
        start: int,
        end: int,
        *,
        config: RangeReadConfig | None = None,
        prefetch: int = 2,
        client_id: str | None = "rillet-range-reader",
        leader_check_ms: int = DEFAULT_LEADER_CHECK_MS,
        ssl_context: ssl.SSLContext | None = None,
        sasl: SaslLogin | None = None,
    ) -> None:
        if start < 0 or end < start:
            raise ValueError(f"bad offset range [{start}, {end})")
        if prefetch < 1:
            raise ValueError("prefetch must be at least 1")
        cfg = config or RangeReadConfig()
        super().__init__(
            ClusterClient(
                bootstrap,
                client_id=client_id,
                request_timeout_ms=cfg.request_timeout_ms,
                leader_check_ms=leader_check_ms,
                ssl_context=ssl_context,
                sasl=sasl,
            )
        )
        self._read = RangeRead(tp, start, end, cfg)
        self._send, self._receive = trio.open_memory_channel[RangeChunk | RangeGap](prefetch)
        self._failure: BaseException | None = None

    def _started(self, nursery: trio.Nursery) -> None:
        nursery.start_soon(self._fetch_ahead)

    async def _fetch_ahead(self) -> None:
        async with self._send:  # closed when done: next() sees the end after the last item
            try:
                await self._read.run(self._cluster, self._send)
            except Exception as exc:  # handed to the reader, in order, after what it has
                self._failure = exc

    async def next(self) -> RangeChunk | RangeGap | None:
        """The next chunk or gap of the range; None once it has been read to its end.
        Raises what stopped the reading (after everything read before it)."""
        self._check_open()
        try:
            return await self._receive.receive()
        except trio.EndOfChannel:
            if self._failure is not None:
                raise self._failure from None
            return None
        except trio.ClosedResourceError:
            raise ClientClosedError(f"{self._read.name}: the reader is closed") from None
