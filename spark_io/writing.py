"""Writing a DataFrame into rillet: which columns mean what, and producing Arrow batches.

Columns (matched ignoring case, like Spark's own column resolution):

=============  =========================================  ===================================
column         type                                       meaning
=============  =========================================  ===================================
value          binary or string (required)                the record's value (null allowed)
key            binary or string                           the record's key; picks the
                                                          partition (Kafka's murmur2)
topic          string                                     the topic, unless the ``topic``
                                                          option is given (it wins)
partition      int                                        an explicit partition
headers        array<struct<key:string,value:binary>>     the record's headers
timestamp      timestamp                                  the record's create time (else now)
offset,        (any)                                      ignored: what a read returns, so a
timestampType                                             read DataFrame can be written back
=============  =========================================  ===================================

Any other column is refused, so a misspelt ``vaule`` fails the write instead of vanishing.

Each Spark task runs one idempotent producer with acks=all: a record is acknowledged once it
is on every in-sync replica, and the producer's own retries (leader changes, lost answers)
never duplicate it. A task retried by Spark writes its records again, so the sink is
at-least-once, as Spark's Kafka sink is.

With the ``transactional`` option each task attempt writes in one transaction, committed once
the task has written everything; its transactional id is the write's id (made on the driver)
and the task's partition, so a retried attempt fences the previous one and aborts what that
left open (docs/spark-transactions.md says why per task attempt).
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import trio

from rillet.client.accumulator import RecordFuture
from rillet.client.errors import RilletError
from rillet.client.producer import Producer
from rillet.spark_io.errors import OptionError
from rillet.spark_io.options import WriteOptions

log = logging.getLogger(__name__)

HEADERS_TYPE = "array<struct<key:string,value:binary>>"
_ACCEPTED: dict[str, tuple[str, ...]] = {
    "value": ("binary", "string"),
    "key": ("binary", "string"),
    "topic": ("string",),
    "partition": ("int",),
    "headers": (HEADERS_TYPE,),
    "timestamp": ("timestamp",),
}
_IGNORED = ("offset", "timestamptype")


@dataclass(frozen=True, slots=True)
class WriteLayout:
    """The input column playing each role (None when absent), decided on the driver."""

    value: str
    key: str | None = None
    topic: str | None = None
    partition: str | None = None
    headers: str | None = None
    timestamp: str | None = None
    fixed_topic: str | None = None  # the ``topic`` option


def plan_write(columns: Sequence[tuple[str, str]], opts: WriteOptions) -> WriteLayout:
    """Check the DataFrame's ``(name, simpleString type)`` columns; raises OptionError."""
    found: dict[str, str] = {}
    for name, kind in columns:
        role = name.lower()
        if role in _IGNORED:
            continue
        accepted = _ACCEPTED.get(role)
        if accepted is None:
            raise OptionError(
                f"column {name!r} cannot be written to rillet: the columns are value "
                "(required), key, topic, partition, headers and timestamp (offset and "
                "timestampType are ignored); select or rename columns first"
            )
        if kind.replace(" ", "") not in accepted:
            raise OptionError(
                f"column {name!r} has type {kind}; it must be {' or '.join(accepted)}"
            )
        if role in found:
            raise OptionError(f"two columns are called {role!r}")
        found[role] = name
    if "value" not in found:
        raise OptionError("a DataFrame written to rillet needs a 'value' column")
    if opts.topic is None and "topic" not in found:
        raise OptionError("no topic: set the 'topic' option or give the DataFrame a 'topic' column")
    return WriteLayout(
        value=found["value"],
        key=found.get("key"),
        topic=found.get("topic"),
        partition=found.get("partition"),
        headers=found.get("headers"),
        timestamp=found.get("timestamp"),
        fixed_topic=opts.topic,
    )


@dataclass(slots=True)
class WriteSummary:
    """What one task wrote: records per topic."""

    records: int = 0
    per_topic: dict[str, int] = field(default_factory=dict)


def _as_bytes(column: Any) -> list[bytes | None]:
    """An Arrow binary or string column as Python bytes (strings UTF-8 encoded)."""
    import pyarrow as pa

    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        column = column.cast(pa.binary())
    values: list[bytes | None] = column.to_pylist()
    return values


def _columns(batch: Any, layout: WriteLayout) -> dict[str, list[Any]]:
    """The batch's columns by role, as Python lists."""
    import pyarrow as pa

    names = {name.lower(): name for name in batch.schema.names}

    def column(name: str | None) -> Any:
        return None if name is None else batch.column(names[name.lower()])

    out: dict[str, list[Any]] = {"value": _as_bytes(column(layout.value))}
    if layout.key is not None:
        out["key"] = _as_bytes(column(layout.key))
    if layout.topic is not None and layout.fixed_topic is None:
        out["topic"] = column(layout.topic).to_pylist()
    if layout.partition is not None:
        out["partition"] = column(layout.partition).to_pylist()
    if layout.headers is not None:
        out["headers"] = [
            None if hs is None else [(h["key"], h["value"]) for h in hs]
            for hs in column(layout.headers).to_pylist()
        ]
    if layout.timestamp is not None:
        micros = column(layout.timestamp).cast(pa.int64()).to_pylist()
        out["timestamp"] = [None if us is None else us // 1000 for us in micros]
    return out


def _check_header_keys(headers: list[tuple[Any, Any]] | None) -> None:
    if headers is not None:
        for key, _ in headers:  # a null value is allowed, as in Kafka
            if key is None:
                raise OptionError("a header has a null key")


async def produce_batches(
    opts: WriteOptions,
    layout: WriteLayout,
    batches: Iterator[Any],
    transactional_id: str | None = None,
) -> WriteSummary:
    """Send every row of ``batches`` (Arrow record batches) and wait for all of them to be
    acknowledged; raises the first failure. With ``transactional_id``, in one transaction:
    committed at the end, aborted when anything fails."""
    async with Producer(
        opts.bootstrap,
        acks="all",
        enable_idempotence=True,
        linger_ms=opts.linger_ms,
        batch_bytes=opts.batch_bytes,
        compression=opts.compression,
        delivery_timeout_ms=opts.delivery_timeout_ms,
        request_timeout_ms=opts.request_timeout_ms,
        max_in_flight=opts.max_in_flight,
        client_id="rillet-spark-writer",
        transactional_id=transactional_id,
        transaction_timeout_ms=opts.transaction_timeout_ms,
        **opts.security.client_options(),
    ) as producer:
        if transactional_id is None:
            return await _send_all(producer, layout, batches)
        # The first begin registers the id: an earlier attempt of this task is fenced, and
        # the transaction it left open aborted, before anything of this attempt is written.
        await producer.begin_transaction()
        try:
            summary = await _send_all(producer, layout, batches)
            await producer.commit_transaction()
        except BaseException:
            with trio.CancelScope(shield=True), contextlib.suppress(RilletError):
                await producer.abort_transaction()  # never visible to read_committed readers
            raise
        return summary


async def _send_all(
    producer: Producer, layout: WriteLayout, batches: Iterator[Any]
) -> WriteSummary:
    """Send every row and wait for all of them; raises the first failure."""
    summary = WriteSummary()
    pending: list[RecordFuture] = []
    while True:
        batch = await trio.to_thread.run_sync(next, batches, None)
        if batch is None:
            break
        cols = _columns(batch, layout)
        n = batch.num_rows
        values = cols["value"]
        keys = cols.get("key")
        topics = cols.get("topic")
        partitions = cols.get("partition")
        headers = cols.get("headers")
        stamps = cols.get("timestamp")
        fixed = layout.fixed_topic
        for i in range(n):
            topic = fixed if fixed is not None else topics[i] if topics else None
            if topic is None:
                raise OptionError("a row has a null topic (and no 'topic' option is set)")
            row_headers = headers[i] if headers else None
            if row_headers:
                _check_header_keys(row_headers)
            future = await producer.send(
                topic,
                values[i],
                keys[i] if keys else None,
                row_headers,
                partitions[i] if partitions else None,
                stamps[i] if stamps else None,
            )
            pending.append(future)
            if fixed is None:
                summary.per_topic[topic] = summary.per_topic.get(topic, 0) + 1
        if fixed is not None and n:
            summary.per_topic[fixed] = summary.per_topic.get(fixed, 0) + n
        summary.records += n
        pending = _completed_ok(pending)
    await producer.flush()
    _completed_ok(pending)
    return summary


def _completed_ok(futures: list[RecordFuture]) -> list[RecordFuture]:
    """The futures still pending; raises the error of the first failed one."""
    still = []
    for future in futures:
        if future.done():
            error = future.exception()
            if error is not None:
                if isinstance(error, RilletError):
                    raise error
                raise RilletError(f"write failed: {error}") from error
        else:
            still.append(future)
    return still


def write_arrow(
    opts: WriteOptions,
    layout: WriteLayout,
    batches: Iterator[Any],
    transactional_id: str | None = None,
) -> WriteSummary:
    """``produce_batches`` from synchronous code (a Spark task)."""
    return trio.run(produce_batches, opts, layout, batches, transactional_id)


def task_transactional_id(prefix: str, write_id: str) -> str:
    """The transactional id of this Spark task: the same for every attempt of the task (so
    an attempt fences the one before it), different for every task and every write."""
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is None:  # not in a Spark task (a direct call): an id of its own
        return f"{prefix}-{write_id}-{uuid.uuid4().hex}"
    return f"{prefix}-{write_id}-{context.partitionId()}"


def merge(summaries: Sequence[WriteSummary | None]) -> WriteSummary:
    total = WriteSummary()
    for s in summaries:
        if s is None:
            continue
        total.records += s.records
        for topic, n in s.per_topic.items():
            total.per_topic[topic] = total.per_topic.get(topic, 0) + n
    return total


def describe(per_topic: Mapping[str, int]) -> str:
    return ", ".join(f"{n} to {topic!r}" for topic, n in sorted(per_topic.items())) or "nothing"
