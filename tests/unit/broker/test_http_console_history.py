"""The console's history ring, its SVG charts, its settings and the browser's value display."""

from __future__ import annotations

import re

import pytest

from rillet.broker.config.http_config import HttpConfig
from rillet.broker.http.access import AccessPolicy
from rillet.broker.http.errors import HttpError
from rillet.broker.http.history import History, Sample, TopicCounters, busiest, most_lagging
from rillet.broker.http.message_browser import parse_query, shown
from rillet.broker.http.svg_chart import line_chart, si


def sample(bytes_in: int, lag: int = 0, under: int = 0) -> Sample:
    return Sample({"t": TopicCounters(bytes_in, bytes_in // 10, 0)}, {"g": lag}, under)


def test_the_ring_keeps_the_last_capacity_samples_and_derives_rates() -> None:
    history = History(3)
    for i, total in enumerate((0, 1000, 3000, 6000)):
        history.record(i * 1000, sample(total, lag=i))
    assert len(history) == 3
    assert history.rates(lambda c: c.bytes_in) == {"t": [(2000, 2000.0), (3000, 3000.0)]}
    assert history.lag() == {"g": [(1000, 1.0), (2000, 2.0), (3000, 3.0)]}


def test_a_counter_going_back_is_no_traffic_and_a_clock_step_back_restarts() -> None:
    history = History(10)
    history.record(0, sample(5000))
    history.record(1000, sample(100))  # the replica moved away and back
    assert history.rates(lambda c: c.bytes_in) == {"t": [(1000, 0.0)]}
    history.record(500, sample(200, under=2))
    assert len(history) == 1
    assert history.under_replicated() == [(500, 2.0)]


def test_a_topic_gets_a_point_for_an_interval_only_when_in_both_samples() -> None:
    history = History(4)
    history.record(0, Sample())
    history.record(2000, sample(4000))
    history.record(3000, sample(5000))
    assert history.rates(lambda c: c.bytes_in) == {"t": [(3000, 1000.0)]}


def test_a_sample_keeps_the_busiest_topics_and_the_most_lagging_groups() -> None:
    before = {"a": TopicCounters(100, 1, 0), "b": TopicCounters(0, 0, 0)}
    now = {
        "a": TopicCounters(110, 2, 0),  # 10 bytes since before
        "b": TopicCounters(0, 0, 50),  # 50 bytes out
        "c": TopicCounters(30, 1, 0),  # new: counts from zero
        "d": TopicCounters(0, 0, 0),
    }
    assert list(busiest(now, before, 2)) == ["b", "c"]
    assert list(busiest(now, before, 10)) == ["a", "b", "c", "d"]
    assert most_lagging({"g1": 5, "g2": 50, "g3": 5}, 2) == {"g1": 5, "g2": 50}


def test_a_history_needs_room_for_a_rate() -> None:
    with pytest.raises(ValueError, match="2 samples"):
        History(1)


def points(svg: str, series: str) -> list[tuple[float, float]]:
    found = re.search(rf'data-series="{series}" data-points="\d+" points="([^"]*)"', svg)
    assert found is not None
    return [(float(x), float(y)) for x, y in (p.split(",") for p in found.group(1).split())]


def test_a_chart_spans_the_samples_and_starts_its_y_axis_at_zero() -> None:
    svg = line_chart("bytes in", "bytes/s", {"a": [(0, 0.0), (1000, 50.0), (2000, 100.0)]})
    xy = points(svg, "a")
    assert len(xy) == 3
    assert xy[0][0] < xy[1][0] < xy[2][0]
    assert xy[0][1] > xy[1][1] > xy[2][1]  # higher values are drawn higher up
    assert 'class="y-max">100<' in svg and 'class="y-min">0<' in svg
    assert svg.startswith("<svg") and svg.endswith("</svg>")


def test_an_empty_history_says_so_and_one_sample_is_a_dot() -> None:
    empty = line_chart("lag", "records", {})
    assert "no samples yet" in empty and "<polyline" not in empty
    assert "no samples yet" in line_chart("lag", "records", {"g": []})
    one = line_chart("lag", "records", {"g": [(5, 0.0)]})
    assert 'data-points="1"' in one and "<circle" in one
    assert 'class="y-max">1<' in one  # all zero: the axis still has a height


def test_huge_values_stay_short_and_non_finite_ones_are_dropped() -> None:
    svg = line_chart("b", "bytes/s", {"x": [(0, 3e18), (1, float("inf")), (2, float("nan"))]})
    assert 'class="y-max">3E<' in svg
    assert 'data-points="1"' in svg
    assert si(1_500_000) == "1.5M" and si(999) == "999" and si(2e21) == "2e+03E"


def test_names_are_escaped() -> None:
    svg = line_chart("<t>", "u", {'"><script>': [(0, 1.0), (1, 2.0)]})
    assert "<script>" not in svg and "&lt;t&gt;" in svg


def test_console_settings_have_bounds() -> None:
    config = HttpConfig()
    assert (config.history_sample_interval_ms, config.history_samples) == (10_000, 360)
    assert (config.console_browse_max_records, config.console_browse_max_bytes) == (50, 1 << 20)
    with pytest.raises(ValueError, match=r"http\.history_samples must be 2\.\.100000, not 1"):
        HttpConfig(history_samples=1)
    with pytest.raises(ValueError, match=r"http\.history_sample_interval_ms"):
        HttpConfig(history_sample_interval_ms=10)
    with pytest.raises(ValueError, match=r"http\.console_browse_max_records"):
        HttpConfig(console_browse_max_records=5000)
    with pytest.raises(ValueError, match=r"http\.history_max_series must be 1\.\.100, not 0"):
        HttpConfig(history_max_series=0)


def test_values_show_as_text_pretty_json_or_hex() -> None:
    assert shown(b'{"a":1}', "json") == '{\n  "a": 1\n}'
    assert shown(b"not json", "json") == "not json"
    assert shown(b"\x00\xff", "hex") == "00 ff"
    assert shown(None, "text") == "(null)"
    assert shown(b"x" * 5000, "text").endswith("... (5000 bytes)")


def test_browse_queries_are_checked() -> None:
    query = parse_query({"topic": "t", "partition": "2", "timestamp_ms": "5", "format": "hex"})
    assert (query.partition, query.offset, query.timestamp_ms) == (2, None, 5)
    for bad, reason in (
        ({}, "topic is required"),
        ({"topic": "t", "offset": "x"}, "offset must be an integer"),
        ({"topic": "t", "offset": "-1"}, "must not be negative"),
        ({"topic": "t", "format": "xml"}, "format must be one of"),
    ):
        with pytest.raises(HttpError, match=reason) as info:
            parse_query(bad)
        assert info.value.status == 400


def test_the_browser_needs_the_token_when_one_is_configured() -> None:
    policy = AccessPolicy(["node"], token="t" * 16)
    refusal = policy.admit("/console/browse", "node", None).refusal
    assert refusal is not None and refusal.status == 401
    assert policy.admit("/console/browse", "node", "Bearer " + "t" * 16).refusal is None
