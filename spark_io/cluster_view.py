"""What planning asks the cluster: which partitions a subscription covers, and their log
starts, high watermarks and offsets by time. One ClusterClient per call, closed afterwards.

Lookups go through ListOffsets ("latest" is the last stable offset: the high watermark, or
the first offset of a transaction still open below it; never the log end), retried by the
client across leader changes until the request timeout. Reads take committed transactions
only (docs/spark.md), so no planned range reaches into an open one.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

import trio

from rillet.client.cluster import ClusterClient
from rillet.client.errors import (
    AuthenticationFailedError,
    AuthorizationFailedError,
    BrokerError,
    ClientTimeoutError,
    ConnectionFailedError,
    CorruptMessageError,
    LeaderNotAvailableError,
    RilletError,
    error_for,
)
from rillet.client.fetch_decoder import whole_batches
from rillet.client.offsets import list_offsets
from rillet.client.security import ClientSecurity
from rillet.client.types import TopicPartition
from rillet.spark_io.errors import OptionError
from rillet.spark_io.offset_spec import OffsetSpec
from rillet.spark_io.options import ReadOptions
from rillet.spark_io.planning import Bounds, Plan, plan
from rillet.spark_io.subscription import Assign, Subscribe, SubscribePattern, Subscription
from rillet.wire.api import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP
from rillet.wire.batch import ATTR_TIMESTAMP_LOG_APPEND, HEADER_SIZE
from rillet.wire.compression import decompress
from rillet.wire.error_codes import ErrorCode
from rillet.wire.errors import WireError
from rillet.wire.messages import FetchPartition, FetchRequest, FetchResponse
from rillet.wire.record_codec import decode_records

log = logging.getLogger(__name__)

T = TypeVar("T")
# How long a named topic may take to appear in a node's metadata (just created elsewhere).
TOPIC_APPEAR_TIMEOUT_S = 2.0
TIME_LOOKUP_FETCH_BYTES = 1024 * 1024  # a node returns at least the first whole batch


def run_sync(
    fn: Callable[[ClusterClient], Awaitable[T]],
    bootstrap: str,
    timeout_ms: int,
    security: ClientSecurity | None = None,
) -> T:
    """``await fn(cluster)`` with a fresh ClusterClient, from synchronous code."""
    options = security.client_options() if security is not None else {}

    async def main() -> T:
        async with ClusterClient(
            bootstrap, client_id="rillet-spark", request_timeout_ms=timeout_ms, **options
        ) as cluster:
            return await fn(cluster)

    return trio.run(main)


async def discover(
    cluster: ClusterClient, subscription: Subscription, timeout_s: float, missing_ok: bool = False
) -> list[TopicPartition]:
    """Every partition the subscription covers, sorted. A named topic or partition that does
    not exist raises OptionError, or is left out with ``missing_ok`` (streams wait for it)."""
    if isinstance(subscription, SubscribePattern):
        await cluster.refresh_metadata(None)
        return sorted(
            TopicPartition(topic, p.partition)
            for topic in cluster.metadata.topics()
            if subscription.matches(topic)
            for p in cluster.metadata.partitions(topic)
        )
    topics = (
        subscription.topics
        if isinstance(subscription, Subscribe)
        else tuple(sorted({tp.topic for tp in subscription.partitions}))
    )
    counts: dict[str, int] = {}
    if missing_ok:
        await cluster.refresh_metadata(topics)
        for topic in topics:
            count = cluster.partition_count(topic)
            if count is not None:
                counts[topic] = count
        if isinstance(subscription, Assign):
            return sorted(
                tp for tp in subscription.partitions if tp.partition < counts.get(tp.topic, 0)
            )
        return sorted(
            TopicPartition(topic, p.partition)
            for topic in counts
            for p in cluster.metadata.partitions(topic)
        )
    for topic in topics:
        try:
            counts[topic] = await cluster.wait_for_topic(
                topic, min(timeout_s, TOPIC_APPEAR_TIMEOUT_S)
            )
        except (
            ConnectionFailedError,
            ClientTimeoutError,
            AuthenticationFailedError,  # a wrong login, not a missing topic
            AuthorizationFailedError,  # a topic this login may not describe
        ):
            raise
        except RilletError:
            raise OptionError(f"topic {topic!r} does not exist") from None
    if isinstance(subscription, Assign):
        for tp in subscription.partitions:
            if tp.partition >= counts[tp.topic]:
                raise OptionError(
                    f"option 'assign' names {tp.topic}-{tp.partition}, but {tp.topic!r} has "
                    f"{counts[tp.topic]} partition(s)"
                )
        return sorted(subscription.partitions)
    return sorted(
        TopicPartition(topic, p.partition)
        for topic in topics
        for p in cluster.metadata.partitions(topic)
    )


async def bounds(
    cluster: ClusterClient, tps: Iterable[TopicPartition], timeout_s: float
) -> dict[TopicPartition, Bounds]:
    """Log start and last stable offset (the end a read_committed reader may read to) of
    each partition, asked now."""
    tps = list(tps)
    if not tps:
        return {}
    hws = await list_offsets(
        cluster, {tp: LATEST_TIMESTAMP for tp in tps}, timeout_s, read_committed=True
    )
    starts = await list_offsets(cluster, {tp: EARLIEST_TIMESTAMP for tp in tps}, timeout_s)
    return {tp: Bounds(starts[tp][0], hws[tp][0]) for tp in tps}


async def offsets_for_times(
    cluster: ClusterClient, query: dict[TopicPartition, int], timeout_s: float
) -> dict[TopicPartition, int | None]:
    """The first committed offset whose record timestamp is at or after each time (None
    when there is none), as Kafka defines it.

    A node answers with that record's own offset, as Kafka does; rillet nodes before
    2026-11-29 answered at batch granularity (the first batch whose largest timestamp
    reaches the time), so the records of that batch are still fetched and the first one at
    or after both the answer and the time is picked: exact with either answer.
    """
    if not query:
        return {}
    found = await list_offsets(cluster, query, timeout_s)
    out: dict[TopicPartition, int | None] = {}
    for tp, (offset, _) in found.items():
        out[tp] = (
            None
            if offset < 0
            else await _exact_time_offset(cluster, tp, offset, query[tp], timeout_s)
        )
    return out


async def _exact_time_offset(
    cluster: ClusterClient, tp: TopicPartition, offset: int, timestamp_ms: int, timeout_s: float
) -> int:
    """The offset of the first record at or after ``offset`` whose timestamp reaches
    ``timestamp_ms``, looking into the batch that holds ``offset``."""
    last: Exception | None = None
    with trio.move_on_after(timeout_s):
        while True:
            try:
                data = await _fetch_at(cluster, tp, offset, timeout_s)
                batches, _ = whole_batches(data, offset, f"{tp.topic}-{tp.partition}")
                if not batches:
                    return offset
                position, header = batches[0]
                stored = data[position + HEADER_SIZE : position + header.size]
                try:
                    deltas = decode_records(
                        decompress(header.compression, stored), header.record_count
                    ).timestamp_deltas_ms
                except WireError as exc:
                    raise CorruptMessageError(
                        f"corrupt batch at offset {header.base_offset} of "
                        f"{tp.topic}-{tp.partition}: {exc}"
                    ) from exc
                for i, delta in enumerate(deltas):
                    at = header.base_offset + i
                    ts = (
                        header.max_timestamp_ms
                        if header.attributes & ATTR_TIMESTAMP_LOG_APPEND
                        else header.first_timestamp_ms + delta
                    )
                    if at >= offset and ts >= timestamp_ms:
                        return at
                return offset
            except (ConnectionFailedError, ClientTimeoutError, BrokerError) as exc:
                if isinstance(exc, BrokerError) and not exc.retriable:
                    raise
                last = exc
                cluster.metadata.mark_stale(tp)
                await trio.sleep(0.1)
                with contextlib.suppress(ConnectionFailedError, ClientTimeoutError):
                    await cluster.refresh_metadata([tp.topic])
    raise ClientTimeoutError(f"reading {tp.topic}-{tp.partition} at {offset} failed: {last}")


async def _fetch_at(
    cluster: ClusterClient, tp: TopicPartition, offset: int, timeout_s: float
) -> bytes | memoryview:
    conn = await cluster.connection_for_leader(tp)
    request = FetchRequest(
        0,
        1,
        TIME_LOOKUP_FETCH_BYTES,
        [
            FetchPartition(
                tp.topic,
                tp.partition,
                offset,
                TIME_LOOKUP_FETCH_BYTES,
                current_leader_epoch=cluster.metadata.leader_epoch(tp),
            )
        ],
    )
    response: FetchResponse = await conn.request(request, timeout_s)
    for p in response.partitions:
        if p.topic == tp.topic and p.partition == tp.partition:
            if p.error_code != ErrorCode.NONE:
                raise error_for(
                    ErrorCode.from_wire(p.error_code), f"fetch of {tp.topic}-{tp.partition}"
                )
            data = p.records
            return data if isinstance(data, bytes | memoryview) else b""
    raise LeaderNotAvailableError(f"no answer for {tp.topic}-{tp.partition}")


def time_query(spec: OffsetSpec, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
    if spec.kind == "timestamp":
        return dict.fromkeys(tps, spec.timestamp)
    if spec.kind == "timestamps":
        wanted = set(tps)
        return {tp: ts for tp, ts in spec.per_partition.items() if tp in wanted}
    return {}


async def plan_batch(cluster: ClusterClient, opts: ReadOptions) -> Plan:
    """Resolve the options to one offset range per partition, ending at the high watermark
    (or an earlier explicit end) as it is now."""
    timeout_s = opts.request_timeout_ms / 1000
    tps = await discover(cluster, opts.subscription, timeout_s)
    for spec in (opts.starting, opts.ending):
        unknown = spec.partitions() - set(tps)
        if unknown:
            listed = ", ".join(f"{tp.topic}-{tp.partition}" for tp in sorted(unknown))
            raise OptionError(f"offsets are given for partitions that do not exist: {listed}")
    found = await bounds(cluster, tps, timeout_s)
    start_times = await offsets_for_times(cluster, time_query(opts.starting, tps), timeout_s)
    end_times = await offsets_for_times(cluster, time_query(opts.ending, tps), timeout_s)
    result = plan(
        tps,
        found,
        opts.starting,
        opts.ending,
        start_times=start_times,
        end_times=end_times,
        strategy=opts.starting_timestamp_strategy,
        fail_on_data_loss=opts.fail_on_data_loss,
    )
    for warning in result.warnings:
        log.warning("%s", warning)
    return result
