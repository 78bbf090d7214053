"""The consumer: manual assignment, positions and seeks, offset lookups, and ``poll``.

Background work runs in two kinds of task. Fetch loops (fetcher.py), one per leader node,
keep records flowing into per-partition buffers. One maintenance task resolves what blocks
fetching: partitions whose leader is unknown (metadata refresh) and partitions without a
position (an offset lookup for a seek to the beginning or end, the ``auto_offset_reset``
policy, or a reset after OFFSET_OUT_OF_RANGE). ``poll`` only takes buffered records, or waits
for the next response until its timeout.
"""

from __future__ import annotations

import logging
import ssl

import trio

from rillet.client.cluster import REFRESH_FAILURES, ClusterClient
from rillet.client.errors import (
    ClientClosedError,
    ClientTimeoutError,
    ConnectionFailedError,
    CorruptMessageError,
    NoOffsetForPartitionError,
    RilletError,
)
from rillet.client.fetcher import FetchConfig, Fetcher
from rillet.client.leader_watch import DEFAULT_LEADER_CHECK_MS
from rillet.client.lifecycle import ClientLifecycle
from rillet.client.node_choice import (
    DEFAULT_CONNECTION_ATTEMPT_DELAY_MS,
    DEFAULT_CONNECTION_SETUP_TIMEOUT_MS,
    DEFAULT_REQUEST_HEDGE_DELAY_MS,
)
from rillet.client.offsets import OffsetQuery, list_offsets
from rillet.client.sasl import SaslLogin
from rillet.client.subscription import Subscription
from rillet.client.types import ConsumerRecord, OffsetAndTimestamp, TopicPartition
from rillet.wire.api import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP

log = logging.getLogger(__name__)

_RESET_POLICIES = {"earliest": EARLIEST_TIMESTAMP, "latest": LATEST_TIMESTAMP, "none": None}
MAX_BACKOFF_S = 1.0


class Consumer(ClientLifecycle):
    """Async consumer; use as ``async with Consumer(bootstrap) as consumer``.

    See docs/client.md for every option.
    """

    def __init__(
        self,
        bootstrap: str,
        *,
        fetch_max_wait_ms: int = 500,
        fetch_min_bytes: int = 1,
        fetch_max_bytes: int = 50 * 1024 * 1024,
        max_partition_fetch_bytes: int = 1024 * 1024,
        max_poll_records: int = 500,
        auto_offset_reset: str = "earliest",
        check_crcs: bool = True,
        request_timeout_ms: int = 30_000,
        retry_backoff_ms: int = 100,
        client_id: str | None = None,
        leader_check_ms: int = DEFAULT_LEADER_CHECK_MS,
        ssl_context: ssl.SSLContext | None = None,
        sasl: SaslLogin | None = None,
        socket_connection_setup_timeout_ms: int = DEFAULT_CONNECTION_SETUP_TIMEOUT_MS,
        connection_attempt_delay_ms: int = DEFAULT_CONNECTION_ATTEMPT_DELAY_MS,
        request_hedge_delay_ms: int = DEFAULT_REQUEST_HEDGE_DELAY_MS,
        isolation_level: str = "read_uncommitted",
    ) -> None:
        if auto_offset_reset not in _RESET_POLICIES:
            raise ValueError("auto_offset_reset must be 'earliest', 'latest' or 'none'")
        if fetch_max_wait_ms < 0 or fetch_min_bytes < 0 or fetch_max_bytes < 1:
            raise ValueError("fetch sizes and wait must be positive")
        if max_poll_records < 1:
            raise ValueError("max_poll_records must be at least 1")
        if isolation_level not in ("read_uncommitted", "read_committed"):
            raise ValueError("isolation_level must be 'read_uncommitted' or 'read_committed'")
        # read_committed: records of committed transactions only, up to the last stable
        # offset (docs/client-transactions.md).
        self.read_committed = isolation_level == "read_committed"
        # Records poll returns at most (Kafka's max.poll.records): few record objects live
        # at once, the rest wait as decoded columns (buffered_records).
        self._max_poll_records = max_poll_records
        super().__init__(
            ClusterClient(
                bootstrap,
                client_id=client_id,
                request_timeout_ms=request_timeout_ms,
                leader_check_ms=leader_check_ms,
                ssl_context=ssl_context,
                sasl=sasl,
                socket_connection_setup_timeout_ms=socket_connection_setup_timeout_ms,
                connection_attempt_delay_ms=connection_attempt_delay_ms,
                request_hedge_delay_ms=request_hedge_delay_ms,
            )
        )
        self._reset_policy = _RESET_POLICIES[auto_offset_reset]
        self._request_timeout_s = request_timeout_ms / 1000
        self._backoff_s = retry_backoff_ms / 1000
        self._sub = Subscription()
        self._data = trio.Event()
        self._attention = trio.Event()
        self._reported: set[tuple[TopicPartition, int]] = set()
        self._fetcher = Fetcher(
            self._cluster,
            self._sub,
            FetchConfig(
                max_wait_ms=fetch_max_wait_ms,
                min_bytes=fetch_min_bytes,
                max_bytes=fetch_max_bytes,
                partition_max_bytes=max_partition_fetch_bytes,
                check_crcs=check_crcs,
                request_timeout_s=self._request_timeout_s,
                backoff_s=self._backoff_s,
                reset_policy=self._reset_policy,
                read_committed=self.read_committed,
            ),
            on_data=self._wake_poll,
            on_attention=self._wake_maintenance,
        )

    def _started(self, nursery: trio.Nursery) -> None:
        nursery.start_soon(self._maintain, nursery)

    async def _closing(self, exc_type: type[BaseException] | None) -> None:
        self._wake_poll()  # a poll waiting in another task ends with ClientClosedError

    def _wake_poll(self) -> None:
        self._data.set()

    def _wake_maintenance(self) -> None:
        self._attention.set()

    # -- assignment and positions ---------------------------------------------------------

    def assign(self, partitions: list[TopicPartition]) -> None:
        """Consume exactly these partitions (replacing any earlier assignment)."""
        self._sub.assign(partitions)
        self._wake_maintenance()
        self._fetcher.kick()

    def assignment(self) -> set[TopicPartition]:
        return set(self._sub.states)

    def seek(self, tp: TopicPartition, offset: int) -> None:
        """Consume ``tp`` from ``offset`` on (the next poll returns it first)."""
        if offset < 0:
            raise ValueError("offsets are >= 0")
        self._sub.state(tp).set_position(offset)
        self._fetcher.clear_error(TopicPartition(*tp))  # about the old position
        self._wake_maintenance()  # in case the partition's leader is not known yet
        self._fetcher.kick()

    async def seek_to_beginning(self, *tps: TopicPartition) -> None:
        """Move to the log start of each partition (all assigned ones when none given)."""
        self._seek_to(tps, EARLIEST_TIMESTAMP)

    async def seek_to_end(self, *tps: TopicPartition) -> None:
        """Move to the high watermark of each partition (all assigned ones when none given)."""
        self._seek_to(tps, LATEST_TIMESTAMP)

    def _seek_to(self, tps: tuple[TopicPartition, ...], timestamp: int) -> None:
        # Resolved lazily (like Kafka): by the maintenance task, or by position().
        for tp in tps or tuple(self._sub.states):
            self._sub.state(tp).request_reset(timestamp)
            self._fetcher.clear_error(TopicPartition(*tp))
        self._wake_maintenance()

    async def position(self, tp: TopicPartition) -> int:
        """The offset of the next record ``poll`` will return for ``tp``."""
        self._check_open()
        state = self._sub.state(tp)
        while state.position is None:
            target = state.reset_to if state.reset_to is not None else self._reset_policy
            if target is None:
                raise NoOffsetForPartitionError(
                    f"{tp[0]}-{tp[1]} has no position and auto_offset_reset is 'none'"
                )
            epoch = state.epoch
            found = await list_offsets(
                self._cluster,
                {TopicPartition(*tp): target},
                self._request_timeout_s,
                read_committed=self.read_committed,
            )
            if state.epoch == epoch and state.position is None:
                state.set_position(found[TopicPartition(*tp)][0])
                self._fetcher.kick()
        return state.position

    def highwater(self, tp: TopicPartition) -> int | None:
        """The high watermark seen in the last fetch of ``tp`` (None before any)."""
        hw = self._sub.state(tp).high_watermark
        return hw if hw >= 0 else None

    # -- offset lookups -------------------------------------------------------------------

    async def beginning_offsets(self, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        """The log start offset of each partition."""
        return await self._offsets({TopicPartition(*tp): EARLIEST_TIMESTAMP for tp in tps})

    async def end_offsets(self, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        """The high watermark of each partition: the offset after the last committed record
        (read_committed: the last stable offset)."""
        return await self._offsets({TopicPartition(*tp): LATEST_TIMESTAMP for tp in tps})

    async def _offsets(self, query: OffsetQuery) -> dict[TopicPartition, int]:
        self._check_open()
        found = await list_offsets(
            self._cluster, query, self._request_timeout_s, read_committed=self.read_committed
        )
        return {tp: offset for tp, (offset, _) in found.items()}

    async def offsets_for_times(
        self, query: dict[TopicPartition, int]
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        """The first committed offset at or after each timestamp (None when there is none)."""
        self._check_open()
        if any(ts < 0 for ts in query.values()):
            raise ValueError("timestamps must be >= 0")
        found = await list_offsets(
            self._cluster,
            {TopicPartition(*tp): ts for tp, ts in query.items()},
            self._request_timeout_s,
        )
        return {
            tp: OffsetAndTimestamp(offset, ts) if offset >= 0 else None
            for tp, (offset, ts) in found.items()
        }

    # -- polling --------------------------------------------------------------------------

    async def poll(
        self, timeout_ms: int = 1000, max_records: int | None = None
    ) -> list[ConsumerRecord]:
        """Records ready for the application, at most ``max_records`` (by default the
        consumer's ``max_poll_records``); an empty list after ``timeout_ms`` without any.

        Raises errors met in the background once each: CorruptMessageError,
        OffsetOutOfRangeError (with auto_offset_reset="none"), NoOffsetForPartitionError,
        or a non-retriable BrokerError.
        """
        self._check_open()
        if not self._sub.states:
            raise RilletError("no partitions assigned: call assign() first")
        if max_records is None:
            max_records = self._max_poll_records
        elif max_records < 1:
            raise ValueError("max_records must be at least 1")
        self._raise_error()
        records = self._take(max_records)
        if not records:
            deadline = trio.current_time() + max(timeout_ms, 0) / 1000
            while not records:
                self._data = trio.Event()
                with trio.move_on_at(deadline):
                    await self._data.wait()
                self._check_open()
                self._raise_error()
                records = self._take(max_records)
                if trio.current_time() >= deadline:
                    break
        if records:
            self._fetcher.kick()  # emptied buffers: fetch the next records meanwhile
        else:
            await trio.lowlevel.checkpoint()
        return records

    def _take(self, max_records: int) -> list[ConsumerRecord]:
        try:
            return self._sub.take(max_records)
        except CorruptMessageError:
            self._fetcher.kick()  # the partition is fetched again from the damaged batch
            raise

    def _raise_error(self) -> None:
        error = self._fetcher.pop_error()
        if error is not None:
            raise error

    # -- maintenance ----------------------------------------------------------------------

    async def _maintain(self, nursery: trio.Nursery) -> None:
        backoff = self._backoff_s
        while True:
            self._attention = trio.Event()
            try:
                settled = await self._maintain_once(nursery)
            except ClientClosedError:
                return  # the consumer is closing
            if settled:
                backoff = self._backoff_s
                await self._attention.wait()
            else:
                # Backoff before retrying; new work (a seek, an error) wakes us sooner.
                with trio.move_on_after(backoff):
                    await self._attention.wait()
                backoff = min(backoff * 2, MAX_BACKOFF_S)

    async def _maintain_once(self, nursery: trio.Nursery) -> bool:
        """One pass: learn leaders, resolve positions, start fetch loops. True if settled."""
        settled = True
        unknown = {tp.topic for tp in self._sub.states if self._cluster.leader_for(tp) is None}
        if unknown:
            try:
                await self._cluster.refresh_metadata(unknown)
            except REFRESH_FAILURES as exc:
                log.debug("metadata refresh failed: %s", exc)
            settled = not any(self._cluster.leader_for(tp) is None for tp in self._sub.states)
        settled = await self._resolve_positions() and settled
        self._fetcher.ensure_loops(nursery)
        self._fetcher.kick()
        return settled

    async def _resolve_positions(self) -> bool:
        query: OffsetQuery = {}
        for tp, target in self._sub.resets_needed(self._reset_policy).items():
            if target is None:
                mark = (tp, self._sub.states[tp].epoch)
                if mark in self._reported:
                    continue  # raised once by poll already; seek() clears it (new epoch)
                self._reported.add(mark)
                self._fetcher.report(
                    tp,
                    NoOffsetForPartitionError(
                        f"{tp.topic}-{tp.partition} has no position and auto_offset_reset is "
                        "'none': seek first"
                    ),
                )
                self._wake_poll()
            elif self._cluster.leader_for(tp) is not None:
                query[tp] = target
        if not query:
            return True
        epochs = {tp: self._sub.states[tp].epoch for tp in query}
        try:
            found = await list_offsets(
                self._cluster, query, self._request_timeout_s, read_committed=self.read_committed
            )
        except (ClientTimeoutError, ConnectionFailedError) as exc:
            log.debug("offset lookup failed: %s", exc)
            return False
        except ClientClosedError:
            raise
        except RilletError as exc:  # a non-retriable answer: poll raises it
            self._fetcher.report("offsets", exc)
            self._wake_poll()
            return True
        for tp, (offset, _) in found.items():
            state = self._sub.states.get(tp)
            if state is not None and state.epoch == epochs[tp] and state.position is None:
                state.set_position(offset)
        return True
