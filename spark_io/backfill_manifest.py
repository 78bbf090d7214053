"""The committed ranges of a backfill output folder, and which of them a new range replaces.

Each ``range=NNNNNNNN`` folder holds a manifest (topic, start and end offset per partition,
rows, files) that is written before the folder becomes visible, so the manifests are the
record of what the output holds. A run reads them to number its own range and to find the
ranges it covers; the exactly-once argument of the job (backfill_job.py) rests on
:func:`superseded`. These are decisions over folders and offsets only, so they are tested
without Spark or a cluster.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rillet.spark_io.errors import BackfillError

MANIFEST = "_manifest.json"
RANGE_PREFIX = "range="


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
