"""The outcome of a run for people: a JSON summary and a PNG timeline.

The summary counts operations by outcome, gives throughput and acknowledgement latency,
lists the faults as applied with the longest write gap around each, and the violations.
The timeline shows acknowledged writes per second (top) and acknowledgement latency on a
log scale (bottom, median and maximum per time bucket) with each fault window shaded in its
kind's colour, so a gap can be matched to the fault that caused it at a glance.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

from rillet.chaos.availability import availability, fault_summary
from rillet.chaos.checker import Violation, duplicate_count
from rillet.chaos.final_state import FinalState
from rillet.chaos.history import History
from rillet.chaos.png import BLACK, Canvas, Color

SUMMARY_FILE = "summary.json"
TIMELINE_FILE = "timeline.png"
FAULT_COLORS: dict[str, Color] = {
    "kill-leader": (255, 196, 196),
    "kill-partition-leader": (255, 222, 170),
    "kill-any": (226, 204, 255),
    "pause": (196, 220, 255),
    "restart-corrupt-tail": (196, 238, 196),
}
OTHER_FAULT: Color = (220, 220, 220)
BAR: Color = (40, 90, 160)
MEDIAN: Color = (30, 120, 60)
WORST: Color = (200, 40, 40)
AXIS: Color = (90, 90, 90)
GRID: Color = (235, 235, 235)


def percentile(sorted_values: list[float], q: float) -> float | None:
    if not sorted_values:
        return None
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def summarize(history: History, final: FinalState, violations: list[Violation]) -> dict[str, Any]:
    outcomes = Counter(w.outcome for w in history.writes)
    acks = sorted(w.done_t for w in history.acknowledged() if w.done_t is not None)
    latencies = sorted(
        w.latency_s * 1000 for w in history.acknowledged() if w.latency_s is not None
    )
    span = acks[-1] - acks[0] if len(acks) > 1 else 0.0
    gaps = availability(history)
    return {
        "verdict": "ok" if not violations else "violations",
        "violations": [v.to_json() for v in violations],
        "writes": {
            "invoked": len(history.writes),
            "ok": outcomes.get("ok", 0),
            "fail": outcomes.get("fail", 0),
            "unknown": outcomes.get("unknown", 0),
            "acks_per_s": round(len(acks) / span, 1) if span > 0 else 0.0,
        },
        "latency_ms": {
            name: None if (v := percentile(latencies, q)) is None else round(v, 2)
            for name, q in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99), ("max", 1.0))
        },
        "faults": fault_summary(history.faults),
        "availability": gaps,
        "max_write_gap_s": max((g["longest_write_gap_s"] for g in gaps), default=0.0),
        "max_partition_gap_s": max(
            (g["longest_partition_gap_s"] or 0.0 for g in gaps), default=0.0
        ),
        "final": {
            "records_read": sum(len(r) for r in final.records.values()),
            "duplicates": duplicate_count(final),
            "received_by_members": len(final.received),
            "committed": {str(p): o for p, o in sorted(final.committed.items())},
            "recovered": final.recovered,
            "notes": final.notes,
        },
        "group_samples": len(history.groups),
        "crashes": [{"node": c.node, "t": c.t, "status": c.status} for c in history.crashes],
    }


def write_timeline(history: History, path: Path, width: int = 1200, height: int = 560) -> None:
    path.write_bytes(render_timeline(history, width, height).png())


def render_timeline(history: History, width: int = 1200, height: int = 560) -> Canvas:
    c = Canvas(width, height)
    left, right = 70, width - 20
    top_panel = (40, 250)  # throughput
    low_panel = (290, 480)  # latency
    ends = [w.done_t for w in history.writes if w.done_t is not None]
    t_end = max([*ends, *(f.heal_t or f.start_t for f in history.faults), 1.0])
    seed = history.meta.get("config", {}).get("seed", "?")
    c.text(left, 10, f"seed {seed}: acknowledged writes/s and ack latency, faults shaded")

    def x_of(t: float) -> int:
        return left + int((right - left) * max(0.0, t) / t_end)

    for f in history.faults:
        if f.skipped is None:
            color = FAULT_COLORS.get(f.kind, OTHER_FAULT)
            heal = f.heal_t if f.heal_t is not None else t_end
            for y0, y1 in (top_panel, low_panel):
                c.rect(x_of(f.start_t), y0, max(x_of(f.start_t), x_of(heal)), y1, color)
    buckets = max(1, min(right - left, int(t_end / 0.25)))
    bucket_s = t_end / buckets
    counts = [0] * buckets
    lat: list[list[float]] = [[] for _ in range(buckets)]
    for w in history.acknowledged():
        if w.done_t is None or w.latency_s is None:
            continue
        b = min(buckets - 1, int(w.done_t / bucket_s))
        counts[b] += 1
        lat[b].append(w.latency_s * 1000)
    _throughput(c, counts, bucket_s, top_panel, left, right)
    _latency(c, lat, low_panel, left, right)
    for y0, y1 in (top_panel, low_panel):
        c.line(left, y1, right, y1, AXIS)
        c.line(left, y0, left, y1, AXIS)
    step = 10 if t_end > 30 else 5
    for s in range(0, int(t_end) + 1, step):
        x = x_of(s)
        c.line(x, low_panel[1], x, low_panel[1] + 4, AXIS)
        c.text(x - 4, low_panel[1] + 8, f"{s}s", AXIS)
    _legend(c, left, height - 40)
    return c


def _throughput(
    c: Canvas, counts: list[int], bucket_s: float, panel: tuple[int, int], left: int, right: int
) -> None:
    y0, y1 = panel
    peak = max(max(counts, default=0) / bucket_s, 1.0)
    c.text(4, y0, f"{peak:.0f}", AXIS)
    c.text(4, (y0 + y1) // 2, "ack/s", AXIS)
    c.text(4, y1 - 10, "0", AXIS)
    width = (right - left) / len(counts)
    for i, n in enumerate(counts):
        if n:
            h = int((y1 - y0) * (n / bucket_s) / peak)
            x = left + int(i * width)
            c.rect(x, y1 - h, max(x, left + int((i + 1) * width) - 1), y1, BAR)


def _latency(
    c: Canvas, lat: list[list[float]], panel: tuple[int, int], left: int, right: int
) -> None:
    y0, y1 = panel
    decades = 5  # 1 ms .. 100 s

    def y_of(ms: float) -> int:
        v = min(max(math.log10(max(ms, 1.0)), 0.0), decades)
        return y1 - int((y1 - y0) * v / decades)

    for d in range(decades + 1):
        y = y_of(10.0**d)
        c.line(left + 1, y, right, y, GRID)
        c.text(4, y - 5, f"{10**d}ms" if d < 3 else f"{10 ** (d - 3)}s", AXIS)
    width = (right - left) / len(lat)
    last: dict[Color, tuple[int, int]] = {}
    for i, values in enumerate(lat):
        if not values:
            continue
        values.sort()
        x = left + int((i + 0.5) * width)
        for color, v in ((MEDIAN, values[len(values) // 2]), (WORST, values[-1])):
            y = y_of(v)
            if color in last:
                c.line(last[color][0], last[color][1], x, y, color)
            last[color] = (x, y)
    c.text(right - 260, y0 + 4, "median", MEDIAN)
    c.text(right - 160, y0 + 4, "max", WORST)


def _legend(c: Canvas, x: int, y: int) -> None:
    for kind, color in FAULT_COLORS.items():
        c.rect(x, y, x + 14, y + 10, color)
        x = c.text(x + 20, y, kind, BLACK) + 16
