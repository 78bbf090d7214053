"""The backfill job: a topic's committed records into Parquet, incrementally, exactly once.

Each run reads from the group's committed offsets (the log start for partitions without one)
to the high watermark fixed when the run starts, writes those records as Parquet partitioned
by event date, and only then records the end offsets for the group, so the next run starts
where this one ended. Output layout::

    OUTPUT/
      range=00000001/              one folder per committed offset range
        _manifest.json             topic, start and end offset per partition, rows, files
        event_date=2024-05-01/part-....parquet
        event_date=2024-05-02/part-....parquet
      range=00000002/...
      _staging/<run id>/           a run's output while it is written (never read)
      _trash/                      ranges being replaced
      _rillet_backfill.lock        one run at a time per output

Spark and other Parquet readers skip names starting with ``_``, so ``spark.read.parquet(
OUTPUT)`` sees exactly the committed ranges (with ``range`` and ``event_date`` as partition
columns).

Why a killed run leaves no duplicates and no gaps once it is run again: a run writes into
``_staging`` (invisible), adds the manifest, renames the folder into place (one atomic rename
makes the whole range visible), retires the ranges it replaces, and records its end offsets
last. A run that dies before the rename left only staging, which the next run deletes; the
offsets were not recorded, so the next run reads the same start again. A run that dies after
the rename but before recording its offsets left a visible range starting at the group's
offsets: the next run starts at the same offsets, so its new range covers that one, and it
*replaces* it (every committed range whose offsets lie at or after the run's start is
retired when the new range is published). So after any completed run the ranges are
disjoint and together cover every offset from the first start to the recorded end.

This module is the driver: it plans the run, calls the steps in the order above and
records the offsets. The manifests and what a new range replaces are in
:mod:`~rillet.spark_io.backfill_manifest`, the lock and clean-up of the output folder in
:mod:`~rillet.spark_io.backfill_output`, and the Spark step that writes Parquet in
:mod:`~rillet.spark_io.backfill_parquet`.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rillet.client.cluster import ClusterClient
from rillet.client.security import ClientSecurity
from rillet.client.types import TopicPartition
from rillet.spark_io import cluster_view
from rillet.spark_io.backfill_manifest import (
    MANIFEST,
    RANGE_PREFIX,
    Manifest,
    load_manifests,
    superseded,
)
from rillet.spark_io.backfill_output import (
    STAGING,
    TRASH,
    clean_leftovers,
    fsync_tree,
    locked,
    parquet_files,
)
from rillet.spark_io.backfill_parquet import write_parquet
from rillet.spark_io.errors import BackfillError
from rillet.spark_io.offset_spec import EARLIEST, OffsetSpec
from rillet.spark_io.offset_store import (
    FileOffsetStore,
    GroupOffsetStore,
    OffsetStore,
    atomic_write_json,
)
from rillet.spark_io.planning import Plan, plan
from rillet.spark_io.subscription import Subscribe
from rillet.wire.atomic_file import fsync_dir

log = logging.getLogger(__name__)

OFFSETS_DIR = "_rillet_offsets"

# Test hook points, in the order a run passes them.
HOOKS = ("written", "published", "recorded")


@dataclass(slots=True)
class BackfillResult:
    topic: str
    group: str
    output: str
    start: dict[int, int]
    end: dict[int, int]
    rows: int = 0
    range_dir: str | None = None  # the folder this run published (None: nothing new)
    replaced: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def records_planned(self) -> int:
        return sum(self.end[p] - self.start.get(p, self.end[p]) for p in self.end)

    def summary(self) -> str:
        if self.range_dir is None:
            return f"{self.topic}: nothing new for group {self.group!r} (at {self.end})"
        replaced = f", replacing {', '.join(self.replaced)}" if self.replaced else ""
        return (
            f"{self.topic}: {self.rows} record(s) into {self.range_dir}{replaced} in "
            f"{self.seconds:.1f}s; group {self.group!r} now at {self.end}"
        )


# -- the job --------------------------------------------------------------------------------


def make_store(
    kind: str,
    bootstrap: str,
    group: str,
    output: Path,
    security: ClientSecurity | None = None,
) -> OffsetStore:
    if kind == "group":
        return GroupOffsetStore(bootstrap, group, security=security)
    if kind == "file":
        return FileOffsetStore(output / OFFSETS_DIR / f"{group}.json", group)
    raise ValueError(f"offsets store must be 'group' or 'file', not {kind!r}")


def _plan(
    bootstrap: str,
    topic: str,
    stored: Mapping[int, int],
    fail_on_data_loss: bool,
    timeout_ms: int,
    security: ClientSecurity | None = None,
) -> Plan:
    starting = OffsetSpec(
        "offsets", {TopicPartition(topic, p): o for p, o in stored.items()}, default=EARLIEST
    )

    async def ask(cluster: ClusterClient) -> Plan:
        timeout_s = timeout_ms / 1000
        tps = await cluster_view.discover(cluster, Subscribe((topic,)), timeout_s)
        known = {tp.partition for tp in tps}
        gone = sorted(set(stored) - known)
        if gone:
            raise BackfillError(
                f"the group has offsets for partitions {gone} of {topic!r}, which has "
                f"{len(known)} partition(s): was the topic recreated?"
            )
        found = await cluster_view.bounds(cluster, tps, timeout_s)
        return plan(
            tps,
            found,
            starting,
            OffsetSpec.latest(),
            fail_on_data_loss=fail_on_data_loss,
        )

    result = cluster_view.run_sync(ask, bootstrap, timeout_ms, security)
    for warning in result.warnings:
        log.warning("%s", warning)
    return result


def backfill(
    spark: Any,
    *,
    bootstrap: str,
    topic: str,
    group: str,
    output: str | os.PathLike[str],
    offsets_store: str | OffsetStore = "group",
    event_time: str = "timestamp",
    include_headers: bool = False,
    fail_on_data_loss: bool = True,
    min_partitions: int | None = None,
    max_records_per_partition: int | None = None,
    request_timeout_ms: int = 30_000,
    hook: Callable[[str], None] | None = None,
    security: ClientSecurity | None = None,
) -> BackfillResult:
    """Append ``topic``'s records after ``group``'s committed offsets to the Parquet dataset
    at ``output``; see the module docstring for the layout and the guarantees.

    ``event_time`` is a Spark SQL expression over the read columns giving each record's event
    time (default: the record timestamp); its UTC date is the ``event_date`` partition.
    ``offsets_store`` is "group" (commit to the rillet consumer group, the default), "file"
    (``OUTPUT/_rillet_offsets/GROUP.json``) or an OffsetStore. ``hook`` is called with each
    name of HOOKS as the run passes it (tests use it to stop a run at a chosen point).
    ``security``: the TLS files and SASL login of a secure cluster.
    """
    began = time.monotonic()
    out = Path(output).absolute()
    store = (
        make_store(offsets_store, bootstrap, group, out, security)
        if isinstance(offsets_store, str)
        else offsets_store
    )
    with locked(out):
        clean_leftovers(out)
        manifests = load_manifests(out)
        stored = store.load(topic)
        planned = _plan(bootstrap, topic, stored, fail_on_data_loss, request_timeout_ms, security)
        start = {r.partition: r.start for r in planned.ranges}
        end = {r.partition: r.end for r in planned.ranges}
        result = BackfillResult(topic, group, str(out), start, end)
        replaced = superseded(manifests, topic, start, end)
        if all(start[p] == end[p] for p in end) and not replaced:
            if any(stored.get(p) != end[p] for p in end):
                store.save(topic, end)
            result.seconds = time.monotonic() - began
            log.info("%s", result.summary())
            return result
        run_id = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
        staging = out / STAGING / run_id
        staging.parent.mkdir(parents=True, exist_ok=True)
        reading = {p for p in end if end[p] > start[p]}
        rows = 0
        if reading:
            rows = write_parquet(
                spark,
                staging,
                bootstrap=bootstrap,
                topic=topic,
                start={TopicPartition(topic, p): start[p] for p in reading},
                end={TopicPartition(topic, p): end[p] for p in reading},
                event_time=event_time,
                include_headers=include_headers,
                fail_on_data_loss=fail_on_data_loss,
                min_partitions=min_partitions,
                max_records_per_partition=max_records_per_partition,
                request_timeout_ms=request_timeout_ms,
                security=security,
            )
        else:
            staging.mkdir()
        sequence = 1 + max((m.sequence for m in manifests), default=0)
        manifest = Manifest(
            name=f"{RANGE_PREFIX}{sequence:08d}",
            topic=topic,
            start=start,
            end=end,
            rows=rows,
            run_id=run_id,
            group=group,
            created_ms=int(time.time() * 1000),
            files=parquet_files(staging),
        )
        atomic_write_json(staging / MANIFEST, manifest.to_json())
        fsync_tree(staging)
        _call(hook, "written")
        final = out / manifest.name
        staging.rename(final)  # the range becomes visible, whole
        fsync_dir(out)
        trash = out / TRASH
        for old in replaced:
            trash.mkdir(exist_ok=True)
            (out / old.name).rename(trash / old.name)
            log.info("%s replaces %s", manifest.name, old.name)
        fsync_dir(out)
        _call(hook, "published")
        store.save(topic, end)
        _call(hook, "recorded")
        clean_leftovers(out)
        result.rows = rows
        result.range_dir = str(final)
        result.replaced = [m.name for m in replaced]
        result.seconds = time.monotonic() - began
        log.info("%s", result.summary())
        return result


def _call(hook: Callable[[str], None] | None, point: str) -> None:
    if hook is not None:
        hook(point)
