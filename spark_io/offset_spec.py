"""Where a read starts and where it ends, as the options say it, before the cluster is asked.

A start or end is the log start, the high watermark, offsets per partition, or a time; which
offsets those are is only known when planning asks the cluster (planning.py resolves an
:class:`OffsetSpec` against each partition's bounds). Keeping the unresolved spec a value of
its own lets the options be checked on the driver without a cluster. The ``starting*`` and
``ending*`` option families that build it are parsed here, with the rules of Spark's Kafka
source about what batch and streaming queries accept.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from rillet.client.types import TopicPartition
from rillet.spark_io.errors import OptionError
from rillet.spark_io.option_values import RawOptions, parse_int, parse_partition_offsets

EARLIEST = -2  # in offsets JSON, as in Kafka: the log start
LATEST = -1  # in offsets JSON: the high watermark at planning time

_STARTS = ("startingOffsets", "startingTimestamp", "startingOffsetsByTimestamp")
_ENDS = ("endingOffsets", "endingTimestamp", "endingOffsetsByTimestamp")


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


def parse_starting(
    opts: RawOptions, streaming: bool
) -> tuple[OffsetSpec, Literal["error", "latest"]]:
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


def parse_ending(opts: RawOptions, streaming: bool) -> OffsetSpec:
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
