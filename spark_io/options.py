"""The options of ``format("rillet")``: parsed and validated on the driver, without Spark.

Spark hands a data source its options as strings in a case-insensitive map. Everything is
checked here, once, before a task runs: an unknown option, two ways of saying the same thing,
malformed JSON or a value out of range is an :class:`OptionError` whose message names the
option and what it accepts. The names and meanings follow Spark's Kafka source (subscribe,
subscribePattern, assign, startingOffsets, endingOffsets, failOnDataLoss, ...); docs/spark.md
lists them all.

This module holds the option names, the validated :class:`ReadOptions` and
:class:`WriteOptions`, and the two entry points that check a whole option set. The
parsers of single values are in :mod:`~rillet.spark_io.option_values`; what to read and
where to start and end, with their options, in :mod:`~rillet.spark_io.subscription` and
:mod:`~rillet.spark_io.offset_spec`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from rillet.client.producer import DEFAULT_BATCH_BYTES
from rillet.client.security import ClientSecurity
from rillet.spark_io.errors import OptionError
from rillet.spark_io.offset_spec import OffsetSpec, parse_ending, parse_starting
from rillet.spark_io.option_values import (
    SECURITY_OPTIONS,
    RawOptions,
    check_topic_name,
    parse_bool,
    parse_bootstrap_option,
    parse_int,
    parse_required_int,
    parse_security_options,
)
from rillet.spark_io.subscription import Assign, Subscription, parse_subscription
from rillet.wire.compression import Compression
from rillet.wire.errors import WireError

MiB = 1024 * 1024

# Canonical spelling of every option (Spark lower-cases nothing, but matches keys ignoring
# case; we compare lower-cased keys and report the canonical name).
# kafka.bootstrap.servers is Spark's Kafka source's name for the same thing: jobs written for
# format("kafka") work after changing the format only.
_COMMON = ("bootstrap", "kafka.bootstrap.servers", "requestTimeoutMs", *SECURITY_OPTIONS)
READ_OPTIONS = (
    *_COMMON,
    "subscribe",
    "subscribePattern",
    "assign",
    "startingOffsets",
    "startingTimestamp",
    "startingOffsetsByTimestamp",
    "startingOffsetsByTimestampStrategy",
    "endingOffsets",
    "endingTimestamp",
    "endingOffsetsByTimestamp",
    "failOnDataLoss",
    "minPartitions",
    "maxRecordsPerPartition",
    "includeHeaders",
    "maxOffsetsPerTrigger",
    "maxPartitionFetchBytes",
    "fetchMaxWaitMs",
    "retryTimeoutMs",
)
WRITE_OPTIONS = (
    *_COMMON,
    "topic",
    "compression",
    "lingerMs",
    "batchBytes",
    "deliveryTimeoutMs",
    "maxInFlight",
)
# Transactional batch writes (docs/spark-transactions.md): batch jobs only.
TXN_WRITE_OPTIONS = ("transactional", "transactionalIdPrefix", "transactionTimeoutMs")
DEFAULT_TRANSACTIONAL_ID_PREFIX = "rillet-spark"


@dataclass(frozen=True, slots=True)
class ReadOptions:
    bootstrap: str
    subscription: Subscription
    starting: OffsetSpec
    ending: OffsetSpec
    starting_timestamp_strategy: Literal["error", "latest"] = "error"
    fail_on_data_loss: bool = True
    min_partitions: int | None = None
    max_records_per_partition: int | None = None
    include_headers: bool = False
    max_offsets_per_trigger: int | None = None
    request_timeout_ms: int = 30_000
    retry_timeout_ms: int = 60_000
    max_partition_fetch_bytes: int = 8 * MiB
    fetch_max_wait_ms: int = 500
    security: ClientSecurity = field(default_factory=ClientSecurity)


@dataclass(frozen=True, slots=True)
class WriteOptions:
    bootstrap: str
    topic: str | None = None
    compression: str = "none"
    linger_ms: int = 5
    batch_bytes: int = DEFAULT_BATCH_BYTES
    delivery_timeout_ms: int = 120_000
    request_timeout_ms: int = 30_000
    max_in_flight: int = 5
    security: ClientSecurity = field(default_factory=ClientSecurity)
    # One transaction per task attempt, committed when the task has written everything.
    transactional: bool = False
    transactional_id_prefix: str = DEFAULT_TRANSACTIONAL_ID_PREFIX
    transaction_timeout_ms: int = 60_000


def _check_against_assign(subscription: Subscription, *specs: tuple[str, OffsetSpec]) -> None:
    if not isinstance(subscription, Assign):
        return
    assigned = set(subscription.partitions)
    for name, spec in specs:
        extra = spec.partitions() - assigned
        if extra:
            listed = ", ".join(f"{tp.topic}-{tp.partition}" for tp in sorted(extra))
            raise OptionError(f"option {name!r} names partitions that are not assigned: {listed}")


def parse_read_options(raw: Mapping[str, Any], streaming: bool = False) -> ReadOptions:
    """Validate the options of ``spark.read`` (or ``readStream``) ``.format("rillet")``."""
    opts = RawOptions(raw, READ_OPTIONS, "read")
    bootstrap = parse_bootstrap_option(opts)
    subscription = parse_subscription(opts)
    starting, strategy = parse_starting(opts, streaming)
    ending = parse_ending(opts, streaming)
    _check_against_assign(subscription, ("startingOffsets", starting), ("endingOffsets", ending))
    return ReadOptions(
        bootstrap=bootstrap,
        subscription=subscription,
        starting=starting,
        ending=ending,
        starting_timestamp_strategy=strategy,
        fail_on_data_loss=parse_bool("failOnDataLoss", opts.get("failOnDataLoss"), True),
        min_partitions=parse_int("minPartitions", opts.get("minPartitions"), None),
        max_records_per_partition=parse_int(
            "maxRecordsPerPartition", opts.get("maxRecordsPerPartition"), None
        ),
        include_headers=parse_bool("includeHeaders", opts.get("includeHeaders"), False),
        max_offsets_per_trigger=parse_int(
            "maxOffsetsPerTrigger", opts.get("maxOffsetsPerTrigger"), None
        ),
        request_timeout_ms=parse_required_int(
            "requestTimeoutMs", opts.get("requestTimeoutMs"), 30_000
        ),
        retry_timeout_ms=parse_required_int(
            "retryTimeoutMs", opts.get("retryTimeoutMs"), 60_000, minimum=0
        ),
        max_partition_fetch_bytes=parse_required_int(
            "maxPartitionFetchBytes", opts.get("maxPartitionFetchBytes"), 8 * MiB, minimum=1024
        ),
        fetch_max_wait_ms=parse_required_int(
            "fetchMaxWaitMs", opts.get("fetchMaxWaitMs"), 500, minimum=0
        ),
        security=parse_security_options(opts),
    )


# Spark's own option of a streaming query, handed to the sink too; Spark uses it, rillet not.
STREAM_WRITE_OPTIONS = (*WRITE_OPTIONS, "checkpointLocation")


def parse_write_options(raw: Mapping[str, Any], streaming: bool = False) -> WriteOptions:
    """Validate the options of ``df.write`` (or ``writeStream``) ``.format("rillet")``."""
    if streaming and any(str(k).lower() == "transactional" for k in raw):
        raise OptionError(
            "option 'transactional' is for batch writes (df.write); a streaming query's sink "
            "is at-least-once (docs/spark-transactions.md)"
        )
    known = STREAM_WRITE_OPTIONS if streaming else (*WRITE_OPTIONS, *TXN_WRITE_OPTIONS)
    opts = RawOptions(raw, known, "write")
    topic = opts.get("topic")
    if topic is not None:
        topic = check_topic_name("topic", topic)
    compression = (opts.get("compression") or "none").strip().lower()
    try:
        Compression.parse(compression)
    except WireError:
        names = ", ".join(repr(c.name.lower()) for c in Compression)
        raise OptionError(
            f"option 'compression' must be one of {names}, not {compression!r}"
        ) from None
    return WriteOptions(
        bootstrap=parse_bootstrap_option(opts),
        topic=topic,
        compression=compression,
        linger_ms=parse_required_int("lingerMs", opts.get("lingerMs"), 5, minimum=0),
        batch_bytes=parse_required_int("batchBytes", opts.get("batchBytes"), DEFAULT_BATCH_BYTES),
        delivery_timeout_ms=parse_required_int(
            "deliveryTimeoutMs", opts.get("deliveryTimeoutMs"), 120_000
        ),
        request_timeout_ms=parse_required_int(
            "requestTimeoutMs", opts.get("requestTimeoutMs"), 30_000
        ),
        max_in_flight=parse_required_int("maxInFlight", opts.get("maxInFlight"), 5),
        security=parse_security_options(opts),
        transactional=parse_bool("transactional", opts.get("transactional"), False),
        transactional_id_prefix=_id_prefix(opts.get("transactionalIdPrefix")),
        transaction_timeout_ms=parse_required_int(
            "transactionTimeoutMs", opts.get("transactionTimeoutMs"), 60_000
        ),
    )


def _id_prefix(text: str | None) -> str:
    if text is None:
        return DEFAULT_TRANSACTIONAL_ID_PREFIX
    if not text.strip():
        raise OptionError("option 'transactionalIdPrefix' must not be empty")
    return text.strip()
