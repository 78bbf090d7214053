"""Small line charts drawn on the server as SVG text: a pure function of the samples.

The console loads nothing from outside the node and needs no chart library: each chart is
an ``<svg>`` element with one ``<polyline>`` per series (plus a dot when a series has a
single point), axes labelled with the value range (SI suffixes, so 10**15 stays short) and
the time span. Every name is escaped; values that are not finite are dropped. The y axis
starts at 0 and ends at the largest value (1 when all are 0); the x axis spans the earliest
to the latest sample of any series.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape

Point = tuple[int, float]  # (time in ms, value)

WIDTH = 480
HEIGHT = 170
_LEFT, _RIGHT, _TOP, _BOTTOM = 52, 120, 22, 22
COLOURS = ("#1d6fb8", "#d1495b", "#2a9d8f", "#e9a03b", "#6a4c93", "#5c677d", "#8ab17d")
_SI = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def si(value: float) -> str:
    """``value`` in at most four significant figures with an SI suffix (``1.5M``)."""
    for scale, suffix in _SI:
        if abs(value) >= scale:
            return f"{value / scale:.3g}{suffix}"
    return f"{value:.3g}"


def span_label(span_ms: int) -> str:
    if span_ms >= 120_000:
        return f"last {span_ms / 60_000:.0f} min"
    return f"last {span_ms / 1000:.0f} s"


def line_chart(title: str, unit: str, series: Mapping[str, Sequence[Point]]) -> str:
    """An SVG chart of ``series`` (name -> points in time order) titled ``title``."""
    clean = {
        name: [(t, v) for t, v in points if math.isfinite(v)] for name, points in series.items()
    }
    clean = {name: points for name, points in clean.items() if points}
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{WIDTH}" '
        f'height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(title)}" data-chart="{escape(title)}">'
        f'<text x="4" y="14" font-size="13" font-weight="600">{escape(title)} '
        f'<tspan fill="#5a6476" font-weight="400">({escape(unit)})</tspan></text>'
    )
    plot_w = WIDTH - _LEFT - _RIGHT
    plot_h = HEIGHT - _TOP - _BOTTOM
    frame = (
        f'<rect x="{_LEFT}" y="{_TOP}" width="{plot_w}" height="{plot_h}" fill="#fafbfc" '
        'stroke="#dde2ea"/>'
    )
    if not clean:
        empty = (
            f'<text x="{_LEFT + plot_w / 2}" y="{_TOP + plot_h / 2}" text-anchor="middle" '
            'font-size="12" fill="#8a93a3">no samples yet</text>'
        )
        return head + frame + empty + "</svg>"
    times = [t for points in clean.values() for t, _ in points]
    t_min, t_max = min(times), max(times)
    values = [v for points in clean.values() for _, v in points]
    y_max = max(values) if max(values) > 0 else 1.0
    y_min = min(values) if min(values) < 0 else 0.0
    t_span = max(t_max - t_min, 1)

    def x(t: int) -> float:
        return _LEFT + (t - t_min) / t_span * plot_w if t_max > t_min else _LEFT + plot_w

    def y(v: float) -> float:
        return _TOP + plot_h - (v - y_min) / (y_max - y_min) * plot_h

    parts = [head, frame]
    parts.append(
        f'<text x="{_LEFT - 4}" y="{_TOP + 4}" text-anchor="end" font-size="11" '
        f'class="y-max">{si(y_max)}</text>'
        f'<text x="{_LEFT - 4}" y="{_TOP + plot_h}" text-anchor="end" font-size="11" '
        f'class="y-min">{si(y_min)}</text>'
        f'<text x="{_LEFT}" y="{HEIGHT - 6}" font-size="11" fill="#5a6476">'
        f"{span_label(t_max - t_min)}</text>"
        f'<text x="{_LEFT + plot_w}" y="{HEIGHT - 6}" text-anchor="end" font-size="11" '
        'fill="#5a6476">now</text>'
    )
    for i, (name, points) in enumerate(sorted(clean.items())):
        colour = COLOURS[i % len(COLOURS)]
        coords = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in points)
        parts.append(
            f'<polyline data-series="{escape(name)}" data-points="{len(points)}" '
            f'points="{coords}" fill="none" stroke="{colour}" stroke-width="1.8"/>'
        )
        if len(points) == 1:
            (t, v) = points[0]
            parts.append(f'<circle cx="{x(t):.1f}" cy="{y(v):.1f}" r="2.5" fill="{colour}"/>')
        last = points[-1][1]
        parts.append(
            f'<text x="{_LEFT + plot_w + 6}" y="{_TOP + 10 + 14 * i}" font-size="11" '
            f'fill="{colour}">{escape(name[:18])} {si(last)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
