"""Reading one planned offset range of one partition (a Spark task's work).

The reading itself is the client's range reader (``rillet.client.range_reader``): it fetches
ahead from the partition's leader in a background thread, follows leader moves, retries
within ``retryTimeoutMs`` and checks every batch. This module adds the Spark source's
policy: the task's options travel as a picklable :class:`RangeTask`, records the range
cannot read become :class:`DataLossError` with ``failOnDataLoss=true`` (otherwise a warning,
and the records are skipped), and an exhausted retry budget becomes
:class:`FetchFailedError` (Spark may retry the task).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field

from rillet.client.blocking import BlockingRangeReader
from rillet.client.errors import RetriesExhaustedError
from rillet.client.range_reader import RangeChunk, RangeGap, RangeReadConfig
from rillet.client.security import ClientSecurity
from rillet.client.types import TopicPartition
from rillet.spark_io.errors import DataLossError, FetchFailedError

log = logging.getLogger(__name__)

PREFETCH = 2  # fetched responses waiting for the task's thread


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

    @property
    def read_config(self) -> RangeReadConfig:
        return RangeReadConfig(
            request_timeout_ms=self.request_timeout_ms,
            retry_timeout_ms=self.retry_timeout_ms,
            max_partition_fetch_bytes=self.max_partition_fetch_bytes,
            fetch_max_wait_ms=self.fetch_max_wait_ms,
            read_committed=True,  # aborted transactions' records are never read
        )


def on_gap(task: RangeTask, gap: RangeGap) -> str:
    """Raise DataLossError (failOnDataLoss), or log a warning and return it: reading goes on
    at ``gap.resume_at``."""
    if task.fail_on_data_loss:
        raise DataLossError(gap.reason + "; set failOnDataLoss=false to skip the lost records")
    warning = gap.reason + f"; skipped up to offset {gap.resume_at} (failOnDataLoss=false)"
    log.warning("%s", warning)
    return warning


def read_range_chunks(task: RangeTask) -> Iterator[RangeChunk]:
    """The chunks of ``task``'s range, fetched in the background."""
    if task.start >= task.end:
        return
    try:
        with BlockingRangeReader(
            task.bootstrap,
            task.tp,
            task.start,
            task.end,
            config=task.read_config,
            prefetch=PREFETCH,
            client_id="rillet-spark",
            **task.security.client_options(),
        ) as reader:
            for item in reader:
                if isinstance(item, RangeGap):
                    on_gap(task, item)
                else:
                    yield item
    except RetriesExhaustedError as exc:
        raise FetchFailedError(
            f"{task.name} could not be read within retryTimeoutMs: {exc}"
        ) from exc
