"""The history of a chaos run: one JSON object per line, appended while the run goes on.

Every operation is written when it is invoked and again when its outcome is known — ``ok``
(acknowledged, with its offset), ``fail`` (certainly not written) or ``unknown`` (it may or
may not have been written: a timeout, a connection lost mid-request). Fault windows, group
samples (ownership and committed offsets) and unexpected node exits go to the same file.
Times are seconds on the monotonic clock since the run began (member processes get the
start time, and CLOCK_MONOTONIC is the same clock in every process of the machine).

The checker reads the file back rather than in-memory state, so what it judges is exactly
what was recorded, and ``rillet chaos check DIR`` can judge an old run again. An operation
invoked but never completed (the run ended first) counts as ``unknown``.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

OUTCOMES = ("ok", "fail", "unknown")
ADMIN_OPS = ("create", "delete")
HISTORY_FILE = "history.jsonl"


def value_of(process: str, seq: int) -> str:
    """The unique value a producer writes: its name and a sequence number."""
    return f"{process}:{seq}"


def parse_value(value: str) -> tuple[str, int] | None:
    """ "w1:17" -> ("w1", 17); None for anything the workload did not write."""
    process, sep, seq = value.rpartition(":")
    if not sep or not process or not seq.isdigit():
        return None
    return process, int(seq)


class HistoryWriter:
    """Appends events from any thread; ``clock`` gives seconds since the run began."""

    def __init__(self, path: Path, t0: float | None = None) -> None:
        self.path = path
        self.t0 = time.monotonic() if t0 is None else t0
        self._lock = threading.Lock()
        self._file: IO[str] | None = open(path, "a", encoding="utf-8")  # noqa: SIM115

    def clock(self) -> float:
        return time.monotonic() - self.t0

    def write(self, event: dict[str, Any]) -> None:
        """Append one event (stamped with ``t`` now unless it has one)."""
        event.setdefault("t", round(self.clock(), 6))
        line = json.dumps(event, separators=(",", ":")) + "\n"
        with self._lock:
            if self._file is not None:
                self._file.write(line)

    def flush(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.flush()

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def __enter__(self) -> HistoryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(slots=True)
class Write:
    """One produce operation, invocation and outcome joined."""

    process: str
    value: str
    partition: int
    invoke_t: float
    outcome: str = "unknown"
    done_t: float | None = None
    offset: int | None = None
    error: str | None = None

    @property
    def latency_s(self) -> float | None:
        return None if self.done_t is None else self.done_t - self.invoke_t


@dataclass(slots=True)
class AdminOp:
    """A metadata operation (topic ``create`` or ``delete``), invocation and outcome."""

    f: str
    value: str  # the topic name
    invoke_t: float
    outcome: str = "unknown"
    done_t: float | None = None
    error: str | None = None


@dataclass(slots=True)
class FaultWindow:
    """A fault as applied: when it started and was healed, what it hit (or why skipped)."""

    step: int
    kind: str
    start_t: float
    heal_t: float | None = None
    node: int | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    skipped: str | None = None


@dataclass(frozen=True, slots=True)
class GroupSample:
    """The coordinator's view at ``t``: which member owns which partitions."""

    t: float
    generation: int
    owned: dict[str, list[int]]


@dataclass(frozen=True, slots=True)
class OffsetSample:
    t: float
    offsets: dict[int, int]  # partition -> committed offset (only those committed)


@dataclass(frozen=True, slots=True)
class Crash:
    """A node process that exited without the nemesis killing it."""

    t: float
    node: int
    status: int | None
    log_tail: str


@dataclass(slots=True)
class History:
    meta: dict[str, Any] = field(default_factory=dict)
    writes: list[Write] = field(default_factory=list)
    faults: list[FaultWindow] = field(default_factory=list)
    groups: list[GroupSample] = field(default_factory=list)
    offsets: list[OffsetSample] = field(default_factory=list)
    crashes: list[Crash] = field(default_factory=list)
    admin: list[AdminOp] = field(default_factory=list)

    def acknowledged(self) -> list[Write]:
        return [w for w in self.writes if w.outcome == "ok"]


def parse_history(lines: list[str]) -> History:
    """Join the events of a history file into a History (a torn last line is ignored)."""
    h = History()
    pending: dict[tuple[str, str], Write] = {}
    pending_admin: dict[tuple[str, str], AdminOp] = {}
    faults: dict[int, FaultWindow] = {}
    for line in lines:
        try:
            e = json.loads(line)
        except json.JSONDecodeError:
            continue
        kind = e.get("type")
        if kind == "meta":
            h.meta.update(e.get("meta", {}))
        elif kind == "invoke" and e.get("f") == "send":
            w = Write(e["process"], e["value"], int(e["partition"]), float(e["t"]))
            pending[(w.process, w.value)] = w
            h.writes.append(w)
        elif kind in OUTCOMES and e.get("f") == "send":
            done = pending.pop((e["process"], e["value"]), None)
            if done is not None:
                done.outcome, done.done_t = kind, float(e["t"])
                done.offset, done.error = e.get("offset"), e.get("error")
        elif kind == "fault":
            _fault_event(faults, e)
        elif kind == "group":
            owned = {m: [int(p) for p in ps] for m, ps in e.get("owned", {}).items()}
            h.groups.append(GroupSample(float(e["t"]), int(e["generation"]), owned))
        elif kind == "offsets":
            offsets = {int(p): int(o) for p, o in e.get("offsets", {}).items()}
            h.offsets.append(OffsetSample(float(e["t"]), offsets))
        elif kind == "crash":
            h.crashes.append(
                Crash(float(e["t"]), int(e["node"]), e.get("status"), e.get("log_tail", ""))
            )
        elif kind == "invoke" and e.get("f") in ADMIN_OPS:
            op = AdminOp(e["f"], e["value"], float(e["t"]))
            pending_admin[(op.f, op.value)] = op
            h.admin.append(op)
        elif kind in OUTCOMES and e.get("f") in ADMIN_OPS:
            known = pending_admin.pop((e["f"], e["value"]), None)
            if known is not None:
                known.outcome, known.done_t, known.error = kind, float(e["t"]), e.get("error")
    h.faults = [faults[i] for i in sorted(faults)]
    return h


def _fault_event(faults: dict[int, FaultWindow], e: dict[str, Any]) -> None:
    step = int(e["step"])
    phase = e.get("phase")
    if phase in ("start", "skip"):
        faults[step] = FaultWindow(
            step,
            e["kind"],
            float(e["t"]),
            node=e.get("node"),
            detail=dict(e.get("detail", {})),
            skipped=e.get("reason") if phase == "skip" else None,
        )
    elif phase == "heal" and step in faults:
        window = faults[step]
        window.heal_t = float(e["t"])
        window.detail.update(e.get("detail", {}))


def load_history(path: Path) -> History:
    return parse_history(path.read_text(encoding="utf-8").splitlines())
