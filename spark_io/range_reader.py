"""Reading one planned offset range of one partition, as Arrow batches (a Spark task's work).

A background thread runs trio with a ClusterClient and fetches ahead: it sends Fetch
requests to the partition's leader, checks every batch (CRC-32C, structure) and hands whole
responses over a small channel, so the next response is on its way while the task's thread
decodes the current one into Arrow columns (arrow_records.py). Reading stops exactly at the
planned end: later records of the last batch are cut off, and nothing beyond is fetched.

Failures while reading:

* A fetch waiting on a node after the metadata named a new leader (a paused or cut-off node
  answers nothing; the client re-checks the metadata while a fetch is overdue) is abandoned
  and sent to the new leader at once.
* Leader changes, unreachable nodes and other retriable errors: metadata is refreshed and the
  fetch retried with backoff, for at most ``retry_timeout_ms`` without progress; then
  :class:`FetchFailedError` (Spark may retry the task).
* Records of the range deleted by retention (the log now starts after them), or a leader
  whose log ends below the planned end (an unclean leader change truncated it):
  :class:`DataLossError` with ``failOnDataLoss=true``; otherwise a warning, and the missing
  records are skipped.
* A leader whose log has the records but whose high watermark is still below the planned end
  (a new leader catching up): waited for, for at most ``retry_timeout_ms``, then treated as
  data loss as above.
* A corrupt batch: CorruptMessageError at once (it is not retried: the stored bytes are bad).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

import trio

from rillet.client.cluster import ClusterClient
from rillet.client.errors import (
    BrokerError,
    ClientTimeoutError,
    ConnectionFailedError,
    CorruptMessageError,
    LeaderNotAvailableError,
    error_for,
)
from rillet.client.leader_watch import LeaderMovedError
from rillet.client.security import ClientSecurity
from rillet.client.types import TopicPartition
from rillet.spark_io.errors import DataLossError, FetchFailedError
from rillet.wire.batch import (
    HEADER_SIZE,
    LENGTH_PREFIX_SIZE,
    BatchHeader,
    check_batch,
    peek_length,
)
from rillet.wire.error_codes import ErrorCode
from rillet.wire.errors import WireError
from rillet.wire.messages import FetchPartition, FetchPartitionResponse, FetchRequest

log = logging.getLogger(__name__)

_NO_LIMIT = 1 << 62
PREFETCH = 2  # fetched responses waiting for the task's thread
START_TIMEOUT_S = 60.0
MAX_BACKOFF_S = 1.0
_END = object()  # the range was read to its end


@dataclass(frozen=True, slots=True)
class RangeTask:
    """Everything needed to read one range, picklable (it travels in Spark's InputPartition)."""

    bootstrap: str
    topic: str
    partition: int
    start: int
    end: int
    include_headers: bool = False
    fail_on_data_loss: bool = True
    request_timeout_ms: int = 30_000
    retry_timeout_ms: int = 60_000
    max_partition_fetch_bytes: int = 8 * 1024 * 1024
    fetch_max_wait_ms: int = 500
    security: ClientSecurity = field(default_factory=ClientSecurity)

    @property
    def tp(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition} [{self.start}, {self.end})"


@dataclass(frozen=True, slots=True)
class Chunk:
    """One fetch response's whole batches from ``offset`` on."""

    data: bytes | memoryview
    batches: list[tuple[int, BatchHeader]]
    offset: int


def scan_batches(
    data: bytes | memoryview, offset: int, where: str
) -> tuple[list[tuple[int, BatchHeader]], int]:
    """The checked batches of a record set that hold offsets >= ``offset``, and the offset
    after the last whole batch (``offset`` when there is none). A batch cut short at the end
    (a node may stop at a byte limit) is left for the next fetch."""
    batches: list[tuple[int, BatchHeader]] = []
    position = 0
    end = len(data)
    next_offset = offset
    try:
        while end - position >= LENGTH_PREFIX_SIZE:
            _, size = peek_length(data, position)
            if size > end - position and size >= HEADER_SIZE:
                break
            header = check_batch(data, position, end - position, _NO_LIMIT, True)
            if header.next_offset > offset:
                batches.append((position, header))
                next_offset = header.next_offset
            position += header.size
    except WireError as exc:
        raise CorruptMessageError(
            f"corrupt batch in {where} after offset {next_offset}: {exc}"
        ) from exc
    return batches, next_offset


class _Progress:
    """Retry bookkeeping: how long the current run of failures (or stall) has lasted."""

    def __init__(self, budget_s: float) -> None:
        self.budget_s = budget_s
        self.failing_since: float | None = None
        self.stalled_since: float | None = None
        self.backoff_s = 0.05

    def ok(self) -> None:
        self.failing_since = None
        self.backoff_s = 0.05

    def moved(self) -> None:
        self.ok()
        self.stalled_since = None

    async def failed(self, what: str, exc: BaseException) -> None:
        now = trio.current_time()
        if self.failing_since is None:
            self.failing_since = now
        if now - self.failing_since >= self.budget_s:
            raise FetchFailedError(
                f"{what}: retriable errors for {self.budget_s:.3g}s (retryTimeoutMs), last: {exc}"
            ) from exc
        log.info("%s: %s; retrying in %.2fs", what, exc, self.backoff_s)
        await trio.sleep(self.backoff_s)
        self.backoff_s = min(self.backoff_s * 2, MAX_BACKOFF_S)

    def stalled_for(self) -> float:
        now = trio.current_time()
        if self.stalled_since is None:
            self.stalled_since = now
        return now - self.stalled_since


class RangeFetcher:
    """Iterates the Chunks of one RangeTask; use as a context manager (closing stops the
    background thread, also when the iteration is abandoned half-way)."""

    def __init__(self, task: RangeTask) -> None:
        self.task = task
        self._ready = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._scope: trio.CancelScope | None = None
        self._receive: trio.MemoryReceiveChannel[Any] | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._thread_main,
            name=f"rillet-fetch-{task.topic}-{task.partition}",
            daemon=True,  # an abandoned read never keeps the worker process alive
        )
        self.warnings: list[str] = []

    def __enter__(self) -> Self:
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT_S):
            raise FetchFailedError(f"{self.task.name}: the fetch thread did not start")
        if self._error is not None:
            raise self._error
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        token, scope = self._token, self._scope
        if token is not None and scope is not None:
            try:
                trio.from_thread.run_sync(scope.cancel, trio_token=token)
            except trio.RunFinishedError:
                pass
        self._thread.join()

    def __iter__(self) -> Iterator[Chunk]:
        token, receive = self._token, self._receive
        assert token is not None and receive is not None
        while True:
            try:
                item = trio.from_thread.run(receive.receive, trio_token=token)
            except (trio.EndOfChannel, trio.RunFinishedError):
                item = None
            if item is _END:
                return
            if item is None:  # never without _END first, unless the fetch thread broke
                if self._error is not None:
                    raise self._error
                raise FetchFailedError(f"{self.task.name}: the fetch thread ended early")
            if isinstance(item, BaseException):
                raise item
            yield item

    # -- the trio thread ------------------------------------------------------------------

    def _thread_main(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as exc:
            self._error = exc
        finally:
            self._ready.set()

    async def _main(self) -> None:
        send, receive = trio.open_memory_channel[Any](PREFETCH)
        self._receive = receive
        self._token = trio.lowlevel.current_trio_token()
        t = self.task
        with trio.CancelScope() as scope:
            self._scope = scope
            self._ready.set()
            async with send:  # closed when done: the reader sees the end after the last chunk
                try:
                    async with ClusterClient(
                        t.bootstrap,
                        client_id="rillet-spark",
                        request_timeout_ms=t.request_timeout_ms,
                        **t.security.client_options(),
                    ) as cluster:
                        await self._fetch_range(cluster, send)
                    await send.send(_END)
                except Exception as exc:
                    await send.send(exc)
            # Stay alive until close(): chunks still buffered in the channel can only be
            # received while this trio run exists.
            await trio.sleep_forever()

    async def _fetch_range(self, cluster: ClusterClient, send: trio.MemorySendChannel[Any]) -> None:
        t = self.task
        offset = t.start
        progress = _Progress(t.retry_timeout_ms / 1000)
        while offset < t.end:
            where = f"{t.topic}-{t.partition} at offset {offset}"
            try:
                r = await self._fetch_once(cluster, offset)
            except LeaderMovedError as exc:
                # The metadata names a new leader while the fetch waited (a paused or cut-off
                # node answers nothing): ask the new leader now, without backing off.
                log.info("%s: %s", where, exc)
                continue
            except (ConnectionFailedError, ClientTimeoutError, LeaderNotAvailableError) as exc:
                cluster.metadata.mark_stale(t.tp)
                await progress.failed(where, exc)
                await self._refresh(cluster)
                continue
            code = ErrorCode.from_wire(r.error_code)
            if code is ErrorCode.NONE:
                progress.ok()
                data = _records(r)
                batches, next_offset = scan_batches(data, offset, where)
                if batches:
                    await send.send(Chunk(data, batches, offset))
                    offset = next_offset
                    progress.moved()
                    continue
                offset = self._check_stall(r, offset, progress)
            elif code is ErrorCode.OFFSET_OUT_OF_RANGE:
                progress.ok()
                offset = self._out_of_range(r, offset)
            else:
                err = error_for(code, f"fetch of {where}")
                if not err.retriable:
                    raise err
                if err.needs_metadata_refresh:
                    cluster.metadata.mark_stale(t.tp)
                await progress.failed(where, err)
                await self._refresh(cluster)

    async def _refresh(self, cluster: ClusterClient) -> None:
        try:
            await cluster.refresh_metadata([self.task.topic])
        except (ConnectionFailedError, ClientTimeoutError) as exc:
            log.debug("metadata refresh failed: %s", exc)

    async def _fetch_once(self, cluster: ClusterClient, offset: int) -> FetchPartitionResponse:
        t = self.task
        leader = cluster.leader_for(t.tp)
        if leader is None:
            await cluster.refresh_metadata([t.topic])
            leader = cluster.leader_for(t.tp)
            if leader is None:
                raise LeaderNotAvailableError(f"no leader known for {t.topic}-{t.partition}")
        conn = await cluster.connection(leader)
        request = FetchRequest(
            t.fetch_max_wait_ms,
            1,
            t.max_partition_fetch_bytes,
            [
                FetchPartition(
                    t.topic,
                    t.partition,
                    offset,
                    t.max_partition_fetch_bytes,
                    current_leader_epoch=cluster.metadata.leader_epoch(t.tp),
                )
            ],
        )
        try:
            response = await cluster.leader_request(
                conn,
                leader,
                request,
                [(t.topic, t.partition)],
                t.request_timeout_ms / 1000 + t.fetch_max_wait_ms / 1000,
                expected_wait_s=t.fetch_max_wait_ms / 1000,
            )
        except BrokerError as exc:  # a top-level error answer
            if exc.retriable:
                raise LeaderNotAvailableError(str(exc)) from exc
            raise
        for p in response.partitions:
            if p.topic == t.topic and p.partition == t.partition:
                answer: FetchPartitionResponse = p
                return answer
        raise LeaderNotAvailableError(f"node {leader} did not answer for {t.topic}-{t.partition}")

    def _data_loss(self, message: str, resume_at: int) -> int:
        """Raise (failOnDataLoss) or warn; returns where reading goes on."""
        t = self.task
        if t.fail_on_data_loss:
            raise DataLossError(message + "; set failOnDataLoss=false to skip the lost records")
        warning = message + f"; skipped up to offset {resume_at} (failOnDataLoss=false)"
        log.warning("%s", warning)
        self.warnings.append(warning)
        return resume_at

    def _out_of_range(self, r: FetchPartitionResponse, offset: int) -> int:
        t = self.task
        p = r
        if 0 <= offset < p.log_start_offset:
            resume = min(p.log_start_offset, t.end)
            return self._data_loss(
                f"{t.topic}-{t.partition}: offsets {offset}..{resume - 1} of the planned range "
                f"[{t.start}, {t.end}) were deleted (the log now starts at {p.log_start_offset})",
                resume,
            )
        return self._data_loss(
            f"{t.topic}-{t.partition}: the leader's log ends at {p.log_end_offset}, below "
            f"offset {offset} of the planned range [{t.start}, {t.end}) (an unclean leader "
            "change truncated committed records)",
            t.end,
        )

    def _check_stall(self, r: FetchPartitionResponse, offset: int, progress: _Progress) -> int:
        """An empty answer below the planned end: the leader's high watermark is below it."""
        t = self.task
        p = r
        if 0 <= p.log_end_offset < t.end and p.log_end_offset <= offset:
            return self._data_loss(
                f"{t.topic}-{t.partition}: the leader's log ends at {p.log_end_offset}, below "
                f"the planned end {t.end} (an unclean leader change lost committed records)",
                t.end,
            )
        waited = progress.stalled_for()
        if waited >= progress.budget_s:
            return self._data_loss(
                f"{t.topic}-{t.partition}: the high watermark stayed at {p.high_watermark}, "
                f"below the planned end {t.end}, for {waited:.3g}s (retryTimeoutMs)",
                t.end,
            )
        return offset  # the long poll waited already; ask again


def _records(p: FetchPartitionResponse) -> bytes | memoryview:
    data = p.records
    return data if isinstance(data, bytes | memoryview) else b""


def read_range_chunks(task: RangeTask) -> Iterator[Chunk]:
    """The chunks of ``task``'s range, fetched in the background."""
    if task.start >= task.end:
        return
    with RangeFetcher(task) as fetcher:
        yield from fetcher
