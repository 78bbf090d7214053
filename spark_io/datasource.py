"""The PySpark Python Data Source ``rillet``: batch reads, streaming reads and writes.

Register it once per session, then use it like Spark's Kafka source::

    from rillet.spark_io import register
    register(spark)
    df = (spark.read.format("rillet")
          .option("bootstrap", "127.0.0.1:9092")
          .option("subscribe", "events")
          .load())

How Spark drives it (PySpark 4.x): the DataSource is created on the driver with the options;
``schema()`` runs at ``load()``; ``reader()`` and ``partitions()`` run in a planner process
when the query is planned, and the reader object is pickled for the executors *before*
``partitions()`` runs, so everything ``read()`` needs travels in the InputPartition (a
``RangeTask``). ``read()`` runs in the executors' Python workers and yields Arrow batches.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamArrowWriter,
    DataSourceStreamReader,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from rillet.client.cluster import ClusterClient
from rillet.client.types import TopicPartition
from rillet.spark_io import cluster_view
from rillet.spark_io.errors import OptionError
from rillet.spark_io.offsets_codec import offsets_from_dict, offsets_to_dict
from rillet.spark_io.option_values import parse_bool
from rillet.spark_io.options import (
    ReadOptions,
    WriteOptions,
    parse_read_options,
    parse_write_options,
)
from rillet.spark_io.planning import Bounds, OffsetRange, split_ranges
from rillet.spark_io.range_reader import RangeTask
from rillet.spark_io.schema import columns, schema_ddl
from rillet.spark_io.streaming import StreamPlanner
from rillet.spark_io.writing import WriteLayout, WriteSummary, describe, merge, plan_write

log = logging.getLogger(__name__)

FORMAT = "rillet"


def _expected_struct(include_headers: bool) -> str:
    inner = ",".join(f"{name}:{kind.replace(' ', '')}" for name, kind in columns(include_headers))
    return f"struct<{inner}>"


def _check_schema(schema: StructType | None, include_headers: bool) -> None:
    """A user-given ``.schema(...)`` must be exactly the source's own."""
    if schema is None:
        return
    expected = _expected_struct(include_headers)
    actual = schema.simpleString().replace(" ", "")
    if actual.lower() != expected.lower():
        raise OptionError(
            f"format('rillet') has a fixed schema, {schema_ddl(include_headers)}; do not pass "
            f".schema(...) (got {schema.simpleString()})"
        )


class RilletInputPartition(InputPartition):  # type: ignore[misc, unused-ignore]
    """One offset range of one partition: ``value`` is the RangeTask."""

    def __init__(self, task: RangeTask) -> None:
        super().__init__(task)
        self.task = task


def _tasks(opts: ReadOptions, ranges: Sequence[OffsetRange]) -> list[RilletInputPartition]:
    return [
        RilletInputPartition(
            RangeTask(
                bootstrap=opts.bootstrap,
                topic=r.topic,
                partition=r.partition,
                start=r.start,
                end=r.end,
                include_headers=opts.include_headers,
                fail_on_data_loss=opts.fail_on_data_loss,
                request_timeout_ms=opts.request_timeout_ms,
                retry_timeout_ms=opts.retry_timeout_ms,
                max_partition_fetch_bytes=opts.max_partition_fetch_bytes,
                fetch_max_wait_ms=opts.fetch_max_wait_ms,
                security=opts.security,
            )
        )
        for r in ranges
    ]


def _read(partition: InputPartition) -> Iterator[Any]:
    task = getattr(partition, "value", None)
    if not isinstance(task, RangeTask):  # Spark's placeholder for an empty plan
        return iter(())
    from rillet.spark_io.arrow_records import read_arrow

    return read_arrow(task)


class RilletBatchReader(DataSourceReader):  # type: ignore[misc, unused-ignore]
    """``spark.read.format("rillet")``: one consistent committed range per query."""

    def __init__(self, opts: ReadOptions) -> None:
        self.opts = opts

    def partitions(self) -> list[RilletInputPartition]:
        opts = self.opts

        async def plan(cluster: ClusterClient) -> Any:
            return await cluster_view.plan_batch(cluster, opts)

        planned = cluster_view.run_sync(
            plan, opts.bootstrap, opts.request_timeout_ms, opts.security
        )
        ranges = split_ranges(planned.ranges, opts.min_partitions, opts.max_records_per_partition)
        log.info(
            "planned %d record(s) of %d partition(s) in %d Spark partition(s)",
            sum(r.size for r in ranges),
            len(planned.ranges),
            len(ranges),
        )
        return _tasks(opts, ranges)

    def read(self, partition: InputPartition) -> Iterator[Any]:
        return _read(partition)


class RilletStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):  # type: ignore[misc, unused-ignore]
    """``spark.readStream.format("rillet")``: micro-batches of committed records."""

    def __init__(self, opts: ReadOptions) -> None:
        self.opts = opts
        self.planner = StreamPlanner(opts)

    def _bounds(self) -> dict[TopicPartition, Bounds]:
        opts = self.opts

        async def ask(cluster: ClusterClient) -> dict[TopicPartition, Bounds]:
            timeout_s = opts.request_timeout_ms / 1000
            tps = await cluster_view.discover(
                cluster, opts.subscription, timeout_s, missing_ok=True
            )
            return await cluster_view.bounds(cluster, tps, timeout_s)

        return cluster_view.run_sync(ask, opts.bootstrap, opts.request_timeout_ms, opts.security)

    def initialOffset(self) -> dict[str, Any]:  # noqa: N802
        opts = self.opts

        async def ask(cluster: ClusterClient) -> dict[TopicPartition, int]:
            timeout_s = opts.request_timeout_ms / 1000
            tps = await cluster_view.discover(
                cluster, opts.subscription, timeout_s, missing_ok=True
            )
            found = await cluster_view.bounds(cluster, tps, timeout_s)
            times = await cluster_view.offsets_for_times(
                cluster, cluster_view.time_query(opts.starting, tps), timeout_s
            )
            return self.planner.initial(found, times)

        start = cluster_view.run_sync(ask, opts.bootstrap, opts.request_timeout_ms, opts.security)
        return offsets_to_dict(start)

    def prepareForTriggerAvailableNow(self) -> None:  # noqa: N802
        self.planner.prepare_available_now(self._bounds())

    def getDefaultReadLimit(self) -> ReadLimit:  # noqa: N802
        if self.opts.max_offsets_per_trigger is None:
            return ReadAllAvailable()
        return ReadMaxRows(self.opts.max_offsets_per_trigger)

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:  # noqa: N802
        max_rows = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        ends, _ = self.planner.latest(
            offsets_from_dict(start, "start offsets"), self._bounds(), max_rows
        )
        return offsets_to_dict(ends)

    def reportLatestOffset(self) -> dict[str, Any] | None:  # noqa: N802
        seen = self.planner.latest_seen
        return offsets_to_dict(seen) if seen else None

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[RilletInputPartition]:
        begin = offsets_from_dict(start, "start offsets")
        finish = offsets_from_dict(end, "end offsets")
        if all(begin.get(tp) == e for tp, e in finish.items()):
            return []
        planned = self.planner.ranges(begin, finish, self._bounds())
        return _tasks(self.opts, planned.ranges)

    def read(self, partition: InputPartition) -> Iterator[Any]:
        return _read(partition)

    def commit(self, end: dict[str, Any]) -> None:
        log.debug("micro-batch committed up to %s", end)


@dataclass
class RilletCommitMessage(WriterCommitMessage):  # type: ignore[misc, unused-ignore]
    records: int = 0
    per_topic: dict[str, int] = field(default_factory=dict)


class RilletWriter(DataSourceArrowWriter):  # type: ignore[misc, unused-ignore]
    """``df.write.format("rillet")``: an acks=all idempotent producer per task.

    At-least-once: records of a task Spark retries (or of finished tasks when the job
    aborts) stay in the topic; see docs/spark.md. With ``transactional``, one transaction
    per task attempt, and a retried attempt fences the one before it
    (docs/spark-transactions.md).
    """

    def __init__(self, opts: WriteOptions, layout: WriteLayout) -> None:
        self.opts = opts
        self.layout = layout
        # Made once, on the driver: every attempt of a task shares the transactional id.
        self.write_id = uuid.uuid4().hex[:16]

    def write(self, iterator: Iterator[Any]) -> RilletCommitMessage:
        from rillet.spark_io.writing import task_transactional_id, write_arrow

        txn_id = None
        if self.opts.transactional:
            txn_id = task_transactional_id(self.opts.transactional_id_prefix, self.write_id)
        summary = write_arrow(self.opts, self.layout, iterator, txn_id)
        return RilletCommitMessage(summary.records, summary.per_topic)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        total = merge([_summary(m) for m in messages])
        log.info("wrote %d record(s): %s", total.records, describe(total.per_topic))

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        total = merge([_summary(m) for m in messages])
        log.warning(
            "write aborted; records of the tasks that finished stay written (at-least-once): %s",
            describe(total.per_topic),
        )


class RilletStreamWriter(DataSourceStreamArrowWriter):  # type: ignore[misc, unused-ignore]
    """``df.writeStream.format("rillet")``: each micro-batch's tasks write as the batch sink
    does (an acks=all idempotent producer per task, which returns only once every record is
    acknowledged), so Spark commits a micro-batch only after all of its records are in the
    topic. At-least-once: a micro-batch Spark runs again after a failure writes its records
    again. A task that cannot write fails the micro-batch, and the query, with the error."""

    def __init__(self, opts: WriteOptions, layout: WriteLayout) -> None:
        self.opts = opts
        self.layout = layout

    def write(self, iterator: Iterator[Any]) -> RilletCommitMessage:
        from rillet.spark_io.writing import write_arrow

        summary = write_arrow(self.opts, self.layout, iterator)
        return RilletCommitMessage(summary.records, summary.per_topic)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803
        total = merge([_summary(m) for m in messages])
        log.info("micro-batch %d: wrote %d record(s)", batchId, total.records)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803
        total = merge([_summary(m) for m in messages])
        log.warning(
            "micro-batch %d aborted; records of the tasks that finished stay written "
            "(at-least-once): %s",
            batchId,
            describe(total.per_topic),
        )


def _summary(message: Any) -> WriteSummary | None:
    if not isinstance(message, RilletCommitMessage):
        return None
    return WriteSummary(message.records, dict(message.per_topic))


class RilletDataSource(DataSource):  # type: ignore[misc, unused-ignore]
    """``format("rillet")``: see docs/spark.md for the options."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def _include_headers(self) -> bool:
        return parse_bool("includeHeaders", self.options.get("includeHeaders"), False)

    def schema(self) -> str:
        # Called at load(): check the options now, so mistakes surface before any planning.
        # Batch and streaming accept slightly different options; the exact check follows in
        # reader() or streamReader().
        try:
            parse_read_options(self.options, streaming=False)
        except OptionError as batch_error:
            try:
                parse_read_options(self.options, streaming=True)
            except OptionError:
                raise batch_error from None
        return schema_ddl(self._include_headers())

    def reader(self, schema: StructType) -> RilletBatchReader:
        opts = parse_read_options(self.options, streaming=False)
        _check_schema(schema, opts.include_headers)
        return RilletBatchReader(opts)

    def streamReader(self, schema: StructType) -> RilletStreamReader:  # noqa: N802
        opts = parse_read_options(self.options, streaming=True)
        _check_schema(schema, opts.include_headers)
        return RilletStreamReader(opts)

    def streamWriter(self, schema: StructType, overwrite: bool) -> RilletStreamWriter:  # noqa: N802
        if overwrite:
            raise OptionError("format('rillet') only appends to topics; use outputMode('append')")
        opts = parse_write_options(self.options, streaming=True)
        layout = plan_write([(f.name, f.dataType.simpleString()) for f in schema.fields], opts)
        return RilletStreamWriter(opts, layout)

    def writer(self, schema: StructType, overwrite: bool) -> RilletWriter:
        if overwrite:
            raise OptionError(
                "format('rillet') only appends to topics; use mode('append') (a topic cannot "
                "be overwritten)"
            )
        opts = parse_write_options(self.options)
        layout = plan_write([(f.name, f.dataType.simpleString()) for f in schema.fields], opts)
        return RilletWriter(opts, layout)


def register(spark: Any) -> None:
    """Make ``format("rillet")`` available in this SparkSession."""
    spark.dataSource.register(RilletDataSource)
