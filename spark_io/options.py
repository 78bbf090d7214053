"""The options of ``format("rillet")``: parsed and validated on the driver, without Spark.

Spark hands a data source its options as strings in a case-insensitive map. Everything is
checked here, once, before a task runs: an unknown option, two ways of saying the same thing,
malformed JSON or a value out of range is an :class:`OptionError` whose message names the
option and what it accepts. The names and meanings follow Spark's Kafka source (subscribe,
subscribePattern, assign, startingOffsets, endingOffsets, failOnDataLoss, ...); docs/spark.md
lists them all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from rillet.client.cluster import parse_bootstrap
from rillet.client.types import TopicPartition
from rillet.spark_io.errors import OptionError
from rillet.wire.compression import Compression
from rillet.wire.errors import WireError

EARLIEST = -2  # in offsets JSON, as in Kafka: the log start
LATEST = -1  # in offsets JSON: the high watermark at planning time

MiB = 1024 * 1024

# Canonical spelling of every option (Spark lower-cases nothing, but matches keys ignoring
# case; we compare lower-cased keys and report the canonical name).
_COMMON = ("bootstrap", "requestTimeoutMs")
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
_SUBSCRIPTIONS = ("subscribe", "subscribePattern", "assign")
_STARTS = ("startingOffsets", "startingTimestamp", "startingOffsetsByTimestamp")
_ENDS = ("endingOffsets", "endingTimestamp", "endingOffsetsByTimestamp")


# -- what to read --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Subscribe:
    """A fixed list of topics (every partition of each)."""

    topics: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SubscribePattern:
    """Every topic whose whole name matches the regular expression (Python ``re`` syntax)."""

    pattern: str

    def matches(self, topic: str) -> bool:
        return re.fullmatch(self.pattern, topic) is not None


@dataclass(frozen=True, slots=True)
class Assign:
    """Exactly these partitions."""

    partitions: tuple[TopicPartition, ...]


Subscription = Subscribe | SubscribePattern | Assign

SpecKind = Literal["earliest", "latest", "offsets", "timestamps", "timestamp"]


@dataclass(frozen=True, slots=True)
class OffsetSpec:
    """Where a range starts or ends, before it is resolved against the cluster.

    ``earliest`` / ``latest``: every partition's log start / high watermark. ``offsets``:
    per partition (``EARLIEST`` and ``LATEST`` allowed as values), partitions not listed take
    ``default``. ``timestamps``: per partition, the first committed offset at or after the
    time (ms); ``timestamp``: the same time for every partition.
    """

    kind: SpecKind
    per_partition: Mapping[TopicPartition, int] = field(default_factory=dict)
    timestamp: int = -1
    default: int = EARLIEST

    @staticmethod
    def earliest() -> OffsetSpec:
        return OffsetSpec("earliest")

    @staticmethod
    def latest() -> OffsetSpec:
        return OffsetSpec("latest", default=LATEST)

    def partitions(self) -> set[TopicPartition]:
        """Partitions the spec names explicitly."""
        return set(self.per_partition)


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


@dataclass(frozen=True, slots=True)
class WriteOptions:
    bootstrap: str
    topic: str | None = None
    compression: str = "none"
    linger_ms: int = 5
    batch_bytes: int = 256 * 1024
    delivery_timeout_ms: int = 120_000
    request_timeout_ms: int = 30_000
    max_in_flight: int = 5


# -- parsing -------------------------------------------------------------------------------


class _Options:
    """The raw options with case-insensitive lookup that remembers what was used."""

    def __init__(self, raw: Mapping[str, Any], known: tuple[str, ...], what: str) -> None:
        self._values: dict[str, str] = {}
        canonical = {name.lower(): name for name in known}
        unknown: list[str] = []
        for key, value in raw.items():
            lower = str(key).lower()
            if lower not in canonical:
                unknown.append(str(key))
                continue
            if value is None:
                continue
            self._values[canonical[lower]] = str(value)
        if unknown:
            raise OptionError(_unknown_message(unknown, known, what))

    def get(self, name: str) -> str | None:
        return self._values.get(name)

    def has(self, name: str) -> bool:
        return name in self._values

    def given(self, names: tuple[str, ...]) -> list[str]:
        return [n for n in names if n in self._values]


def _unknown_message(unknown: list[str], known: tuple[str, ...], what: str) -> str:
    names = ", ".join(repr(u) for u in sorted(unknown))
    hints = []
    if any(u.lower() == "path" for u in unknown):
        hints.append(
            "format('rillet') takes no path: name topics with subscribe, "
            "subscribePattern or assign (reading) or the topic option (writing)"
        )
    if any(u.lower().startswith("kafka.") for u in unknown):
        hints.append(
            "use 'bootstrap' for the node addresses; kafka.* client settings do not apply to rillet"
        )
    hint = ("; " + "; ".join(hints)) if hints else ""
    return f"unknown {what} option(s) {names}{hint}. Known options: {', '.join(known)}"


def parse_bootstrap_option(opts: _Options) -> str:
    text = opts.get("bootstrap")
    if text is None or not text.strip():
        raise OptionError(
            "option 'bootstrap' is required: host:port[,host:port...] of any rillet node"
        )
    try:
        parse_bootstrap(text)
    except ValueError as exc:
        raise OptionError(f"option 'bootstrap': {exc}") from None
    return text.strip()


def parse_bool(name: str, text: str | None, default: bool) -> bool:
    if text is None:
        return default
    lowered = text.strip().lower()
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    raise OptionError(f"option {name!r} must be 'true' or 'false', not {text!r}")


def parse_int(name: str, text: str | None, default: int | None, minimum: int = 1) -> int | None:
    if text is None:
        return default
    try:
        value = int(text.strip())
    except ValueError:
        raise OptionError(f"option {name!r} must be an integer, not {text!r}") from None
    if value < minimum:
        raise OptionError(f"option {name!r} must be at least {minimum}, not {value}")
    return value


def _required_int(name: str, text: str | None, default: int, minimum: int = 1) -> int:
    value = parse_int(name, text, default, minimum)
    assert value is not None
    return value


def _load_json(name: str, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise OptionError(f"option {name!r} is not valid JSON ({exc.msg}): {text!r}") from None


def _partition_key(name: str, topic: str, key: Any) -> int:
    if not isinstance(key, str) or not key.isdigit():
        raise OptionError(
            f"option {name!r}: partition {key!r} of topic {topic!r} is not a partition number"
        )
    return int(key)


def _check_topic_name(name: str, topic: Any) -> str:
    if not isinstance(topic, str) or not topic or topic != topic.strip():
        raise OptionError(f"option {name!r}: {topic!r} is not a topic name")
    return topic


def parse_partition_offsets(
    name: str, text: str, sentinels: tuple[int, ...], what: str = "offset"
) -> dict[TopicPartition, int]:
    """``{"topic": {"0": 12, "1": -2}}`` -> {TopicPartition: value}; values must be >= 0 or
    one of ``sentinels``."""
    data = _load_json(name, text)
    example = '{"events": {"0": 23, "1": -2}}'
    if not isinstance(data, dict):
        raise OptionError(
            f"option {name!r} must be a JSON object of topics to {{partition: {what}}}, "
            f"e.g. {example}; got {text!r}"
        )
    out: dict[TopicPartition, int] = {}
    for topic, parts in data.items():
        _check_topic_name(name, topic)
        if not isinstance(parts, dict):
            raise OptionError(
                f"option {name!r}: topic {topic!r} must map to an object of partition "
                f"numbers to {what}s, e.g. {example}"
            )
        for key, value in parts.items():
            partition = _partition_key(name, topic, key)
            if type(value) is not int or (value < 0 and value not in sentinels):
                allowed = " or ".join(str(s) for s in sentinels)
                extra = f" (or {allowed})" if sentinels else ""
                raise OptionError(
                    f"option {name!r}: {what} of {topic}-{partition} must be an integer >= 0"
                    f"{extra}, not {value!r}"
                )
            out[TopicPartition(topic, partition)] = value
    return out


def parse_subscription(opts: _Options) -> Subscription:
    given = opts.given(_SUBSCRIPTIONS)
    if len(given) != 1:
        found = f"got {', '.join(given)}" if given else "got none"
        raise OptionError(
            "exactly one of 'subscribe' (comma-separated topics), 'subscribePattern' (a "
            f"regular expression) or 'assign' (JSON) must be given; {found}"
        )
    (which,) = given
    text = opts.get(which) or ""
    if which == "subscribe":
        topics = [t.strip() for t in text.split(",")]
        if not text.strip() or any(not t for t in topics):
            raise OptionError(
                f"option 'subscribe' must be a comma-separated list of topic names, not {text!r}"
            )
        if len(set(topics)) != len(topics):
            raise OptionError(f"option 'subscribe' names a topic twice: {text!r}")
        return Subscribe(tuple(topics))
    if which == "subscribePattern":
        if not text:
            raise OptionError("option 'subscribePattern' must be a non-empty regular expression")
        try:
            re.compile(text)
        except re.error as exc:
            raise OptionError(
                f"option 'subscribePattern' is not a valid regular expression ({exc}): {text!r}"
            ) from None
        return SubscribePattern(text)
    data = _load_json("assign", text)
    example = '{"events": [0, 1]}'
    if not isinstance(data, dict) or not data:
        raise OptionError(
            f"option 'assign' must be a JSON object of topics to partition lists, e.g. "
            f"{example}; got {text!r}"
        )
    partitions: list[TopicPartition] = []
    for topic, parts in data.items():
        _check_topic_name("assign", topic)
        if (
            not isinstance(parts, list)
            or not parts
            or not all(type(p) is int and p >= 0 for p in parts)
        ):
            raise OptionError(
                f"option 'assign': topic {topic!r} must map to a non-empty list of partition "
                f"numbers, e.g. {example}; got {parts!r}"
            )
        if len(set(parts)) != len(parts):
            raise OptionError(f"option 'assign' lists a partition of {topic!r} twice")
        partitions += [TopicPartition(topic, p) for p in parts]
    return Assign(tuple(sorted(partitions)))


def _parse_start(opts: _Options, streaming: bool) -> tuple[OffsetSpec, Literal["error", "latest"]]:
    given = opts.given(_STARTS)
    if len(given) > 1:
        raise OptionError(f"give only one of {', '.join(_STARTS)}; got {', '.join(given)}")
    strategy_text = opts.get("startingOffsetsByTimestampStrategy")
    strategy: Literal["error", "latest"] = "error"
    if strategy_text is not None:
        lowered = strategy_text.strip().lower()
        if lowered == "latest":
            strategy = "latest"
        elif lowered != "error":
            raise OptionError(
                "option 'startingOffsetsByTimestampStrategy' must be 'error' or 'latest', "
                f"not {strategy_text!r}"
            )
    default = OffsetSpec.latest() if streaming else OffsetSpec.earliest()
    if not given:
        return default, strategy
    (which,) = given
    text = (opts.get(which) or "").strip()
    if which == "startingTimestamp":
        ts = parse_int(which, text, None, minimum=0)
        assert ts is not None
        return OffsetSpec("timestamp", timestamp=ts), strategy
    if which == "startingOffsetsByTimestamp":
        return OffsetSpec(
            "timestamps",
            parse_partition_offsets(which, text, (), "timestamp"),
            default=default.default,
        ), strategy
    lowered = text.lower()
    if lowered == "earliest":
        return OffsetSpec.earliest(), strategy
    if lowered == "latest":
        if not streaming:
            raise OptionError(
                "startingOffsets='latest' is not allowed for batch queries (it would read "
                "nothing); use 'earliest', offsets JSON, or a streaming query"
            )
        return OffsetSpec.latest(), strategy
    if not lowered.startswith("{"):
        raise OptionError(
            f"option 'startingOffsets' must be 'earliest', 'latest' (streaming only) or JSON "
            f'like {{"events": {{"0": 23, "1": -2}}}}; not {text!r}'
        )
    offsets = parse_partition_offsets(which, text, (EARLIEST, LATEST))
    if not streaming and LATEST in offsets.values():
        raise OptionError("option 'startingOffsets': -1 (latest) is not allowed for batch queries")
    return OffsetSpec("offsets", offsets, default=default.default), strategy


def _parse_end(opts: _Options, streaming: bool) -> OffsetSpec:
    given = opts.given(_ENDS)
    if streaming:
        if given:
            raise OptionError(
                f"{', '.join(given)} cannot be used in streaming queries (a stream has no end; "
                "use Trigger.AvailableNow to stop at what is committed now)"
            )
        return OffsetSpec.latest()
    if len(given) > 1:
        raise OptionError(f"give only one of {', '.join(_ENDS)}; got {', '.join(given)}")
    if not given:
        return OffsetSpec.latest()
    (which,) = given
    text = (opts.get(which) or "").strip()
    if which == "endingTimestamp":
        ts = parse_int(which, text, None, minimum=0)
        assert ts is not None
        return OffsetSpec("timestamp", timestamp=ts, default=LATEST)
    if which == "endingOffsetsByTimestamp":
        return OffsetSpec(
            "timestamps", parse_partition_offsets(which, text, (), "timestamp"), default=LATEST
        )
    lowered = text.lower()
    if lowered == "latest":
        return OffsetSpec.latest()
    if lowered == "earliest":
        raise OptionError("endingOffsets='earliest' is not allowed: it would read nothing")
    if not lowered.startswith("{"):
        raise OptionError(
            "option 'endingOffsets' must be 'latest' or JSON like "
            f'{{"events": {{"0": 100, "1": -1}}}}; not {text!r}'
        )
    offsets = parse_partition_offsets(which, text, (LATEST, EARLIEST))
    if EARLIEST in offsets.values():
        raise OptionError("option 'endingOffsets': -2 (earliest) is not allowed as an end")
    return OffsetSpec("offsets", offsets, default=LATEST)


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
    opts = _Options(raw, READ_OPTIONS, "read")
    bootstrap = parse_bootstrap_option(opts)
    subscription = parse_subscription(opts)
    starting, strategy = _parse_start(opts, streaming)
    ending = _parse_end(opts, streaming)
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
        request_timeout_ms=_required_int("requestTimeoutMs", opts.get("requestTimeoutMs"), 30_000),
        retry_timeout_ms=_required_int(
            "retryTimeoutMs", opts.get("retryTimeoutMs"), 60_000, minimum=0
        ),
        max_partition_fetch_bytes=_required_int(
            "maxPartitionFetchBytes", opts.get("maxPartitionFetchBytes"), 8 * MiB, minimum=1024
        ),
        fetch_max_wait_ms=_required_int(
            "fetchMaxWaitMs", opts.get("fetchMaxWaitMs"), 500, minimum=0
        ),
    )


def parse_write_options(raw: Mapping[str, Any]) -> WriteOptions:
    """Validate the options of ``df.write.format("rillet")``."""
    opts = _Options(raw, WRITE_OPTIONS, "write")
    topic = opts.get("topic")
    if topic is not None:
        topic = _check_topic_name("topic", topic)
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
        linger_ms=_required_int("lingerMs", opts.get("lingerMs"), 5, minimum=0),
        batch_bytes=_required_int("batchBytes", opts.get("batchBytes"), 256 * 1024),
        delivery_timeout_ms=_required_int(
            "deliveryTimeoutMs", opts.get("deliveryTimeoutMs"), 120_000
        ),
        request_timeout_ms=_required_int("requestTimeoutMs", opts.get("requestTimeoutMs"), 30_000),
        max_in_flight=_required_int("maxInFlight", opts.get("maxInFlight"), 5),
    )


def offsets_json(offsets: Mapping[TopicPartition, int]) -> str:
    """{TopicPartition: offset} as the JSON the offset options take (sorted, stable)."""
    return json.dumps(offsets_to_dict(offsets), sort_keys=True)


def offsets_to_dict(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """{TopicPartition: offset} -> {"topic": {"0": offset}} (JSON-friendly, as Spark's
    streaming offsets must be)."""
    out: dict[str, dict[str, int]] = {}
    for tp, offset in sorted(offsets.items()):
        out.setdefault(tp.topic, {})[str(tp.partition)] = int(offset)
    return out


def offsets_from_dict(data: Mapping[str, Any], what: str = "offsets") -> dict[TopicPartition, int]:
    """The inverse of :func:`offsets_to_dict`; raises ValueError on anything else."""
    out: dict[TopicPartition, int] = {}
    if not isinstance(data, Mapping):
        raise ValueError(f"{what} must be an object of topics, not {data!r}")
    for topic, parts in data.items():
        if not isinstance(topic, str) or not isinstance(parts, Mapping):
            raise ValueError(f"{what}: {topic!r} must map to an object of partitions")
        for key, value in parts.items():
            if not str(key).isdigit() or type(value) is not int:
                raise ValueError(f"{what}: bad entry {key!r}: {value!r} for {topic!r}")
            out[TopicPartition(topic, int(key))] = value
    return out
