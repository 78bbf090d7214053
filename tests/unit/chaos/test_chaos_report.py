"""The summary, the PNG encoder and the timeline drawn with it."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest

from rillet.chaos.checker import Violation
from rillet.chaos.final_state import FinalState
from rillet.chaos.history import FaultWindow, History, Write
from rillet.chaos.png import BLACK, WHITE, Canvas
from rillet.chaos.report import FAULT_COLORS, percentile, render_timeline, summarize, write_timeline


def decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and RGB rows of an unfiltered 8-bit RGB PNG (what Canvas writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        if kind == b"IHDR":
            width, height, depth, color, *_ = struct.unpack(">IIBBBBB", body)
            assert (depth, color) == (8, 2)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = 1 + 3 * width
    rows = [raw[y * stride : (y + 1) * stride] for y in range(height)]
    assert all(r[0] == 0 for r in rows)
    return width, height, [r[1:] for r in rows]


def test_canvas_encodes_a_valid_png_with_its_pixels() -> None:
    c = Canvas(5, 3)
    c.rect(1, 0, 2, 1, (10, 20, 30))
    c.set(4, 2, BLACK)
    c.set(99, 99, BLACK)  # off the canvas: clipped, no error
    width, height, rows = decode_png(c.png())
    assert (width, height) == (5, 3)
    assert rows[0][3:6] == bytes([10, 20, 30]) and rows[1][6:9] == bytes([10, 20, 30])
    assert rows[2][12:15] == bytes(BLACK)
    assert rows[2][0:3] == bytes(WHITE)


def test_rectangles_are_clipped_and_lines_include_both_ends() -> None:
    c = Canvas(10, 10)
    c.rect(-5, -5, -1, -1, BLACK)  # wholly outside
    assert all(c.pixel(x, y) == WHITE for x in range(10) for y in range(10))
    c.rect(8, 8, 20, 20, BLACK)
    assert c.pixel(9, 9) == BLACK and c.pixel(7, 7) == WHITE
    c.line(0, 0, 5, 3, BLACK)
    assert c.pixel(0, 0) == BLACK and c.pixel(5, 3) == BLACK


def test_text_draws_known_glyphs_and_advances() -> None:
    c = Canvas(40, 12)
    end = c.text(0, 0, "A1", scale=1)
    assert end == 8 == Canvas.text_width("A1", scale=1)
    assert c.pixel(1, 0) == BLACK  # the top of the A
    assert c.pixel(0, 0) == WHITE
    assert c.text(0, 0, "~", scale=1) == 4  # unknown: a blank of the same width


def test_a_canvas_needs_a_pixel() -> None:
    with pytest.raises(ValueError):
        Canvas(0, 1)


def run_history() -> tuple[History, FinalState]:
    h = History(meta={"config": {"seed": 7}})
    for i in range(100):
        t = i * 0.1
        outcome = "ok" if i % 10 else "unknown"
        h.writes.append(Write("w1", f"w1:{i}", 0, t, outcome, t + 0.005 * (1 + i % 4), i))
    h.faults = [
        FaultWindow(0, "kill-leader", 2.0, 4.0, node=1),
        FaultWindow(1, "pause", 6.0, 7.0, node=2),
        FaultWindow(2, "kill-any", 8.0, skipped="node 3 is already down"),
    ]
    final = FinalState("t", 1)
    final.records = {0: [(i, f"w1:{i}") for i in range(100)]}
    return h, final


def test_summary_counts_outcomes_latency_faults_and_gaps() -> None:
    h, final = run_history()
    violation = Violation("duplicates", "1 value twice", {"count": 1})
    s = summarize(h, final, [violation])
    assert s["verdict"] == "violations"
    assert s["violations"] == [violation.to_json()]
    assert s["writes"] == {"invoked": 100, "ok": 90, "fail": 0, "unknown": 10,
                           "acks_per_s": pytest.approx(90 / 9.815, rel=0.01)}  # fmt: skip
    assert s["latency_ms"]["p50"] == pytest.approx(15.0)
    assert s["latency_ms"]["max"] == pytest.approx(20.0)
    assert s["faults"] == {"kill-any (skipped)": 1, "kill-leader": 1, "pause": 1}
    assert [g["step"] for g in s["availability"]] == [0, 1]
    assert s["final"]["records_read"] == 100
    assert summarize(h, final, [])["verdict"] == "ok"


def test_percentile() -> None:
    assert percentile([], 0.5) is None
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 3.0
    assert percentile([1.0, 2.0], 1.0) == 2.0


def test_the_timeline_shades_applied_faults_and_draws_throughput(tmp_path: Path) -> None:
    h, _ = run_history()
    canvas = render_timeline(h, 600, 400)
    colors = {canvas.pixel(x, y) for x in range(600) for y in range(400)}
    assert FAULT_COLORS["kill-leader"] in colors
    assert FAULT_COLORS["pause"] in colors
    # The legend shows every kind's colour, but only applied faults shade the panels.
    legend_top = 400 - 40
    panel = {canvas.pixel(x, y) for x in range(600) for y in range(legend_top - 5)}
    assert FAULT_COLORS["kill-any"] not in panel
    path = tmp_path / "timeline.png"
    write_timeline(h, path, 600, 400)
    assert decode_png(path.read_bytes())[:2] == (600, 400)


def test_an_empty_history_still_draws() -> None:
    canvas = render_timeline(History(), 300, 200)
    assert canvas.width == 300
