"""A clean's job and its answer as CBOR: what crosses the pipes between the node and a
cleaner child process (``clean_worker``).

The job carries the plan, the source segments (their descriptors reach the child by
inheritance, under the same numbers), the I/O budget and the CPU niceness; the answer is a
:class:`CleanResult`, or the one line of the error that stopped the clean. Everything the
node reads back is checked against the job it sent before anything is installed: an answer
that is not CBOR, has the wrong shape, names a staged segment the job did not ask for, or
a size its staged file does not have raises :class:`CleanerProcessError`, as does a job the
child cannot read. Never pickle: a crashed or confused child must not be able to run code
in the node.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TypeVar

import cbor2

from rillet.partition_store.batch_cleaning import CleaningStats
from rillet.partition_store.compaction_plan import CleanPlan
from rillet.partition_store.errors import CleanerProcessError
from rillet.partition_store.layout import segment_paths
from rillet.partition_store.segment_cleaner import (
    CleanJob,
    CleanResult,
    SourceSegment,
    StagedSegment,
    staging_dir,
)

VERSION = 1
T = TypeVar("T")


def encode_job(job: CleanJob, io_max_bytes_per_second: float, niceness: int) -> bytes:
    plan = job.plan
    return cbor2.dumps(
        {
            "version": VERSION,
            "directory": str(job.directory),
            "groups": [list(group) for group in plan.groups],
            "dirty_start": plan.dirty_start,
            "dirty_end": plan.dirty_end,
            "dirty_ratio": plan.dirty_ratio,
            "delete_horizon_ms": plan.delete_horizon_ms,
            "now_ms": plan.now_ms,
            "sources": [
                [s.base_offset, s.next_offset, s.size_bytes, s.fd] for s in job.sources.values()
            ],
            "index_interval_bytes": job.index_interval_bytes,
            "generation": job.generation,
            "map_max_bytes": job.map_max_bytes,
            "io_max_bytes_per_second": float(io_max_bytes_per_second),
            "niceness": niceness,
        }
    )


def decode_job(data: bytes) -> tuple[CleanJob, float, int]:
    """The job, its I/O budget in bytes per second and the niceness to take."""
    doc = _document(data, "job")
    plan = CleanPlan(
        groups=tuple(tuple(_ints(g, "groups")) for g in _get(doc, "groups", list)),
        dirty_start=_get(doc, "dirty_start", int),
        dirty_end=_get(doc, "dirty_end", int),
        dirty_ratio=_number(doc, "dirty_ratio"),
        delete_horizon_ms=_get(doc, "delete_horizon_ms", int),
        now_ms=_get(doc, "now_ms", int),
    )
    sources: dict[int, SourceSegment] = {}
    for row in _get(doc, "sources", list):
        base, next_offset, size, fd = _ints(row, "sources", 4)
        sources[base] = SourceSegment(base, next_offset, size, fd)
    if any(b not in sources for group in plan.groups for b in group):
        raise CleanerProcessError("cleaner job: a group names a segment it has no source for")
    job = CleanJob(
        Path(_get(doc, "directory", str)),
        plan,
        sources,
        _get(doc, "index_interval_bytes", int),
        _get(doc, "generation", int),
        _get(doc, "map_max_bytes", int),
    )
    return job, _number(doc, "io_max_bytes_per_second"), _get(doc, "niceness", int)


def encode_result(result: CleanResult) -> bytes:
    stats = result.stats
    return cbor2.dumps(
        {
            "version": VERSION,
            "staged": [
                [s.base_offset, s.next_offset, s.size_bytes, [list(x) for x in s.sources]]
                for s in result.staged
            ],
            "stats": [
                stats.batches_in,
                stats.batches_out,
                stats.records_dropped,
                stats.tombstones_dropped,
            ],
            "bytes_read": result.bytes_read,
            "bytes_written": result.bytes_written,
            "keys": result.keys,
            "dirty_end": result.dirty_end,
            "durations_s": result.durations_s,
        }
    )


def encode_failure(exc: BaseException) -> bytes:
    """The answer of a clean that failed (a damaged source, a full disk): its one line."""
    return cbor2.dumps({"version": VERSION, "error": f"{type(exc).__name__}: {exc}"})


def decode_answer(data: bytes, job: CleanJob) -> CleanResult:
    """The child's answer to ``job``, checked against it and against the staged files."""
    doc = _document(data, "answer")
    if "error" in doc:
        raise CleanerProcessError(f"the clean failed in the cleaner process: {doc['error']}")
    staged: list[StagedSegment] = []
    for row in _get(doc, "staged", list):
        if not isinstance(row, list) or len(row) != 4 or not isinstance(row[3], list):
            raise CleanerProcessError(
                "cleaner answer: a staged segment is not [base, next, size, sources]"
            )
        base, next_offset, size = _ints(row[:3], "staged", 3)
        pairs = [_ints(pair, "staged sources", 2) for pair in row[3]]
        staged.append(StagedSegment(base, next_offset, size, tuple((b, n) for b, n in pairs)))
    stats = CleaningStats(*_ints(_get(doc, "stats", list), "stats", 4))
    durations = _get(doc, "durations_s", dict)
    if not all(isinstance(k, str) and isinstance(v, float | int) for k, v in durations.items()):
        raise CleanerProcessError("cleaner answer: durations_s is not a map of seconds")
    result = CleanResult(
        staged,
        stats,
        bytes_read=_get(doc, "bytes_read", int),
        bytes_written=_get(doc, "bytes_written", int),
        keys=_get(doc, "keys", int),
        dirty_end=_get(doc, "dirty_end", int),
        durations_s={k: float(v) for k, v in durations.items()},
    )
    check_answer(job, result)
    return result


def check_answer(job: CleanJob, result: CleanResult) -> None:
    """The answer is one the job could have: a dirty end inside the plan's dirty range, one
    staged segment for each group that starts below it (staging the group's sources below
    the dirty end), whose file is there with the size the answer says."""
    plan = job.plan
    if not plan.dirty_start <= result.dirty_end <= plan.dirty_end:
        raise CleanerProcessError(
            f"cleaner answer: dirty end {result.dirty_end} outside "
            f"[{plan.dirty_start}, {plan.dirty_end}]"
        )
    groups = [g for g in plan.groups if job.sources[g[0]].next_offset <= result.dirty_end]
    if len(result.staged) != len(groups):
        raise CleanerProcessError(
            f"cleaner answer: {len(result.staged)} staged segments, not {len(groups)}"
        )
    for segment, group in zip(result.staged, groups, strict=True):
        wanted = [job.sources[b] for b in group if job.sources[b].next_offset <= result.dirty_end]
        expected = tuple((s.base_offset, s.size_bytes) for s in wanted)
        span = (segment.base_offset, segment.next_offset)
        if not wanted or segment.sources != expected or span != (group[0], wanted[-1].next_offset):
            raise CleanerProcessError(
                f"cleaner answer: staged segment {segment.base_offset} is not one the job asked for"
            )
        path = segment_paths(staging_dir(job.directory), segment.base_offset).log
        try:
            size = os.stat(path).st_size
        except OSError as exc:
            raise CleanerProcessError(f"cleaner answer: staged segment {path}: {exc}") from exc
        if size != segment.size_bytes:
            raise CleanerProcessError(
                f"cleaner answer: staged segment {path} has {size} bytes, not {segment.size_bytes}"
            )


def _document(data: bytes, what: str) -> dict[Any, Any]:
    try:
        doc = cbor2.loads(data)
    except (cbor2.CBORDecodeError, ValueError, TypeError, EOFError) as exc:
        raise CleanerProcessError(f"cleaner {what} is not CBOR: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("version") != VERSION:
        raise CleanerProcessError(f"cleaner {what} is not a version {VERSION} map")
    return doc


def _get(doc: dict[Any, Any], key: str, kind: type[T]) -> T:
    value = doc.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise CleanerProcessError(f"cleaner message: {key} is not {kind.__name__}")
    return value


def _number(doc: dict[Any, Any], key: str) -> float:
    value = doc.get(key)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise CleanerProcessError(f"cleaner message: {key} is not a number")
    return float(value)


def _ints(value: Any, what: str, count: int | None = None) -> list[int]:
    if (
        not isinstance(value, list)
        or (count is not None and len(value) != count)
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise CleanerProcessError(f"cleaner message: {what} is not a list of integers")
    return value
