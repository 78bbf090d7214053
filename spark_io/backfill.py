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
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rillet.client.cluster import ClusterClient
from rillet.client.types import TopicPartition
from rillet.spark_io import cluster_view
from rillet.spark_io.errors import BackfillError
from rillet.spark_io.offset_store import (
    FileOffsetStore,
    GroupOffsetStore,
    OffsetStore,
    atomic_write_json,
    fsync_dir,
)
from rillet.spark_io.options import EARLIEST, OffsetSpec, Subscribe, offsets_json
from rillet.spark_io.planning import Plan, plan

log = logging.getLogger(__name__)

MANIFEST = "_manifest.json"
STAGING = "_staging"
TRASH = "_trash"
LOCK = "_rillet_backfill.lock"
OFFSETS_DIR = "_rillet_offsets"
RANGE_PREFIX = "range="
EVENT_DATE = "event_date"
MICROS_PER_DAY = 86_400_000_000

# Test hook points, in the order a run passes them.
HOOKS = ("written", "published", "recorded")


@dataclass(frozen=True, slots=True)
class Manifest:
    """What one committed range folder holds."""

    name: str  # the folder name, range=NNNNNNNN
    topic: str
    start: dict[int, int]
    end: dict[int, int]
    rows: int
    run_id: str = ""
    group: str = ""
    created_ms: int = 0
    files: list[str] = field(default_factory=list)

    @property
    def sequence(self) -> int:
        return int(self.name.removeprefix(RANGE_PREFIX))

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "topic": self.topic,
            "group": self.group,
            "run_id": self.run_id,
            "created_ms": self.created_ms,
            "start": {str(p): o for p, o in sorted(self.start.items())},
            "end": {str(p): o for p, o in sorted(self.end.items())},
            "rows": self.rows,
            "files": self.files,
        }

    @staticmethod
    def from_json(name: str, data: Mapping[str, Any]) -> Manifest:
        return Manifest(
            name=name,
            topic=str(data["topic"]),
            start={int(p): int(o) for p, o in data["start"].items()},
            end={int(p): int(o) for p, o in data["end"].items()},
            rows=int(data["rows"]),
            run_id=str(data.get("run_id", "")),
            group=str(data.get("group", "")),
            created_ms=int(data.get("created_ms", 0)),
            files=list(data.get("files", [])),
        )


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


# -- the output folder ---------------------------------------------------------------------


def range_dirs(output: Path) -> list[Path]:
    if not output.is_dir():
        return []
    return sorted(p for p in output.iterdir() if p.is_dir() and p.name.startswith(RANGE_PREFIX))


def load_manifests(output: Path) -> list[Manifest]:
    """The committed ranges of ``output``, in sequence order. A range folder without a
    readable manifest cannot come from this job (the manifest is written before the folder
    becomes visible): it is an error, not something to guess about."""
    out = []
    for d in range_dirs(output):
        try:
            data = json.loads((d / MANIFEST).read_text())
            out.append(Manifest.from_json(d.name, data))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise BackfillError(
                f"{d} has no readable {MANIFEST} ({exc}); it was not written by the backfill "
                "job: move it out of the output folder"
            ) from exc
    return sorted(out, key=lambda m: m.sequence)


def superseded(
    manifests: list[Manifest], topic: str, start: Mapping[int, int], end: Mapping[int, int]
) -> list[Manifest]:
    """The committed ranges of ``topic`` that the new range ``[start, end)`` replaces.

    A range overlaps the new one when some partition's offsets intersect. It is replaced when
    it starts at or after the new start in every overlapping partition (the new range covers
    it: re-run after a crash, or a group moved back to a range boundary). A range that begins
    before the new start but reaches into it would be cut in half: refused. So is a committed
    range that reaches past the new end (the high watermark went backwards).
    """
    out = []
    for m in manifests:
        if m.topic != topic:
            continue
        overlapping = [
            p
            for p in m.end
            if m.end[p] > m.start.get(p, m.end[p])
            and p in start
            and m.start.get(p, 0) < end.get(p, 0)
            and m.end[p] > start[p]
        ]
        if not overlapping:
            continue
        for p in overlapping:
            if m.start[p] < start[p]:
                raise BackfillError(
                    f"{m.name} holds {topic}-{p} offsets {m.start[p]}..{m.end[p] - 1}, but the "
                    f"group's offset {start[p]} lies inside it (offsets were moved by hand?); "
                    f"reset the group to {m.start[p]} or {m.end[p]}, or remove {m.name}"
                )
        for p in m.end:
            if p in end and m.end[p] > end[p] and m.end[p] > m.start.get(p, m.end[p]):
                raise BackfillError(
                    f"{m.name} holds {topic}-{p} up to offset {m.end[p]}, beyond the high "
                    f"watermark {end[p]}: committed records were lost from the topic"
                )
        out.append(m)
    return out


@contextlib.contextmanager
def _locked(output: Path) -> Iterator[None]:
    output.mkdir(parents=True, exist_ok=True)
    with open(output / LOCK, "a+") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BackfillError(f"another backfill is running on {output}") from None
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def _clean_leftovers(output: Path) -> None:
    """Delete what killed runs left: staged ranges never published, retired ranges."""
    for name in (STAGING, TRASH):
        d = output / name
        if d.exists():
            for child in d.iterdir():
                log.info("removing %s left by an earlier run", child)
                shutil.rmtree(child, ignore_errors=False)


def _parquet_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.parquet"))


def _fsync_tree(root: Path) -> None:
    """Make the staged files durable before they become visible."""
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            fd = os.open(os.path.join(dirpath, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fsync_dir(Path(dirpath))


# -- the job --------------------------------------------------------------------------------


def make_store(kind: str, bootstrap: str, group: str, output: Path) -> OffsetStore:
    if kind == "group":
        return GroupOffsetStore(bootstrap, group)
    if kind == "file":
        return FileOffsetStore(output / OFFSETS_DIR / f"{group}.json", group)
    raise ValueError(f"offsets store must be 'group' or 'file', not {kind!r}")


def _plan(
    bootstrap: str, topic: str, stored: Mapping[int, int], fail_on_data_loss: bool, timeout_ms: int
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

    result = cluster_view.run_sync(ask, bootstrap, timeout_ms)
    for warning in result.warnings:
        log.warning("%s", warning)
    return result


def event_date_expr(event_time: str) -> str:
    """SQL for the UTC calendar date of ``event_time`` (a timestamp expression), independent
    of the session time zone."""
    return (
        f"date_from_unix_date(CAST(floor(unix_micros(({event_time})) / {MICROS_PER_DAY}) AS INT))"
    )


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
) -> BackfillResult:
    """Append ``topic``'s records after ``group``'s committed offsets to the Parquet dataset
    at ``output``; see the module docstring for the layout and the guarantees.

    ``event_time`` is a Spark SQL expression over the read columns giving each record's event
    time (default: the record timestamp); its UTC date is the ``event_date`` partition.
    ``offsets_store`` is "group" (commit to the rillet consumer group, the default), "file"
    (``OUTPUT/_rillet_offsets/GROUP.json``) or an OffsetStore. ``hook`` is called with each
    name of HOOKS as the run passes it (tests use it to stop a run at a chosen point).
    """
    began = time.monotonic()
    out = Path(output).absolute()
    store = (
        make_store(offsets_store, bootstrap, group, out)
        if isinstance(offsets_store, str)
        else offsets_store
    )
    with _locked(out):
        _clean_leftovers(out)
        manifests = load_manifests(out)
        stored = store.load(topic)
        planned = _plan(bootstrap, topic, stored, fail_on_data_loss, request_timeout_ms)
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
            rows = _write_parquet(
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
            files=_parquet_files(staging),
        )
        atomic_write_json(staging / MANIFEST, manifest.to_json())
        _fsync_tree(staging)
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
        _clean_leftovers(out)
        result.rows = rows
        result.range_dir = str(final)
        result.replaced = [m.name for m in replaced]
        result.seconds = time.monotonic() - began
        log.info("%s", result.summary())
        return result


def _call(hook: Callable[[str], None] | None, point: str) -> None:
    if hook is not None:
        hook(point)


def _write_parquet(
    spark: Any,
    staging: Path,
    *,
    bootstrap: str,
    topic: str,
    start: dict[TopicPartition, int],
    end: dict[TopicPartition, int],
    event_time: str,
    include_headers: bool,
    fail_on_data_loss: bool,
    min_partitions: int | None,
    max_records_per_partition: int | None,
    request_timeout_ms: int,
) -> int:
    """Read exactly ``[start, end)`` and write it to ``staging``; returns the rows written."""
    from pyspark.sql import functions as F  # noqa: N812

    from rillet.spark_io.datasource import register

    register(spark)
    reader = (
        spark.read.format("rillet")
        .option("bootstrap", bootstrap)
        .option("assign", json.dumps({topic: sorted(tp.partition for tp in start)}))
        .option("startingOffsets", offsets_json(start))
        .option("endingOffsets", offsets_json(end))
        .option("includeHeaders", str(include_headers).lower())
        .option("failOnDataLoss", str(fail_on_data_loss).lower())
        .option("requestTimeoutMs", str(request_timeout_ms))
    )
    if min_partitions is not None:
        reader = reader.option("minPartitions", str(min_partitions))
    if max_records_per_partition is not None:
        reader = reader.option("maxRecordsPerPartition", str(max_records_per_partition))
    df = reader.load().withColumn(EVENT_DATE, F.expr(event_date_expr(event_time)))
    df.write.mode("errorifexists").partitionBy(EVENT_DATE).parquet(str(staging))
    rows: int = spark.read.parquet(str(staging)).count()
    return rows
