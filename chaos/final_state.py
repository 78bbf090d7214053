"""What the harness observed after healing, as plain data for the checker.

The harness gathers it (final read, replica files, the members' received records, the
group's committed offsets, whether the cluster recovered in time) and saves it next to the
history as ``final.json``; the checker is then a pure function of the two files.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

FINAL_FILE = "final.json"


@dataclass(frozen=True, slots=True)
class ReplicaCopy:
    """One node's copy of a partition, summarised up to the partition's high watermark.

    ``prefix_bytes`` / ``prefix_sha256`` cover the whole batches below the high watermark
    (all ``.log`` segments concatenated in offset order); ``log_end_offset`` is the offset
    after the last intact batch of the copy.
    """

    node: int
    total_bytes: int
    prefix_bytes: int
    prefix_sha256: str
    log_end_offset: int
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Received:
    """A record a group member's ``poll`` returned."""

    member: str
    partition: int
    offset: int
    value: str


@dataclass(slots=True)
class FinalState:
    topic: str
    partitions: int
    idempotent: bool = True
    # The final full read: partition -> [(offset, value)] and where each read stopped.
    records: dict[int, list[tuple[int, str]]] = field(default_factory=dict)
    end_offsets: dict[int, int] = field(default_factory=dict)  # high watermarks read up to
    read_upto: dict[int, int] = field(default_factory=dict)
    replicas: dict[int, list[ReplicaCopy]] = field(default_factory=dict)
    received: list[Received] = field(default_factory=list)
    committed: dict[int, int] = field(default_factory=dict)  # final committed offsets
    topics: list[str] | None = None  # topics that exist after healing (None: unknown)
    recovered: bool = True
    notes: list[str] = field(default_factory=list)  # what did not go to plan, and why
    # The voters (node id, directory id) of the agreed final DescribeQuorum view (None:
    # the nodes did not agree); chaos/replace_voter.py checks them after replacements.
    voters: list[tuple[int, str]] | None = None

    def read_complete(self, partition: int) -> bool:
        end = self.end_offsets.get(partition)
        return end is not None and self.read_upto.get(partition, 0) >= end

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["records"] = {str(p): [list(r) for r in rs] for p, rs in self.records.items()}
        for key in ("end_offsets", "read_upto", "committed"):
            out[key] = {str(p): v for p, v in getattr(self, key).items()}
        out["replicas"] = {
            str(p): [asdict(c) for c in copies] for p, copies in self.replicas.items()
        }
        return out

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> FinalState:
        def ints(key: str) -> dict[int, int]:
            return {int(p): int(v) for p, v in raw.get(key, {}).items()}

        return cls(
            topic=raw["topic"],
            partitions=int(raw["partitions"]),
            idempotent=bool(raw.get("idempotent", True)),
            records={
                int(p): [(int(o), str(v)) for o, v in rs]
                for p, rs in raw.get("records", {}).items()
            },
            end_offsets=ints("end_offsets"),
            read_upto=ints("read_upto"),
            replicas={
                int(p): [ReplicaCopy(**c) for c in copies]
                for p, copies in raw.get("replicas", {}).items()
            },
            received=[Received(**r) for r in raw.get("received", [])],
            committed=ints("committed"),
            topics=raw.get("topics"),
            recovered=bool(raw.get("recovered", True)),
            notes=list(raw.get("notes", [])),
            voters=None
            if raw.get("voters") is None
            else [(int(n), str(d)) for n, d in raw["voters"]],
        )

    def save(self, directory: Path) -> Path:
        path = directory / FINAL_FILE
        path.write_text(json.dumps(self.to_json()) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, directory: Path) -> FinalState:
        return cls.from_json(json.loads((directory / FINAL_FILE).read_text(encoding="utf-8")))
