"""The console's server-drawn views: charts of the last hour, topic configs, log directories.

Unlike the live overview (``/``, refreshed by a little JavaScript), these pages are plain
HTML built on the server, readable with scripts off and by ``curl``: each is one function of
what the node already holds. Every value from the metadata or the log is escaped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape
from pathlib import Path

from rillet.broker.handlers.log_dirs import describe_replicas, disk_space
from rillet.broker.http.history import History, TopicCounters
from rillet.broker.http.node_probe import NodeProbe
from rillet.broker.http.svg_chart import line_chart, si
from rillet.broker.replica.topic_config import topic_config_defaults

NAV = (
    ("/", "overview"),
    ("/console/charts", "charts"),
    ("/console/browse", "messages"),
    ("/console/configs", "topic configs"),
    ("/console/logdirs", "log dirs"),
)
STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f4f6f9; }
header { background: #1d3557; color: #fff; padding: 10px 20px; display: flex; gap: 18px;
  align-items: baseline; }
header h1 { font-size: 18px; margin: 0; }
header a { color: #fff; opacity: .85; font-size: 13px; }
header a.here { opacity: 1; font-weight: 600; }
main { padding: 12px 20px; display: flex; flex-wrap: wrap; gap: 14px; }
section { background: #fff; border: 1px solid #dde2ea; border-radius: 6px; padding: 8px 12px; }
section.wide { flex-basis: 100%; }
h2 { font-size: 15px; margin: 4px 0 8px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid #eef1f5; font-size: 13px;
  vertical-align: top; }
th { color: #5a6476; font-weight: 600; }
.override { font-weight: 600; }
pre { margin: 0; white-space: pre-wrap; word-break: break-all; font-size: 12px; }
.muted { color: #8a93a3; }
.bad { color: #8a1c1c; }
"""


def page(title: str, here: str, sections: Iterable[str]) -> str:
    """A whole console page: the navigation bar and ``sections`` (HTML already escaped)."""
    links = " ".join(
        f'<a href="{href}"{" class=here" if href == here else ""}>{escape(label)}</a>'
        for href, label in NAV
    )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>rillet {escape(title)}</title><style>{STYLE}</style></head><body>"
        f'<header><h1>rillet</h1><nav style="display:flex;gap:14px">{links}</nav></header>'
        f"<main>{''.join(sections)}</main></body></html>\n"
    )


def section(title: str, inner: str, wide: bool = False) -> str:
    cls = ' class="wide"' if wide else ""
    return f"<section{cls}><h2>{escape(title)}</h2>{inner}</section>"


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], attrs: str = "") -> str:
    """A table whose ``rows`` are already-escaped cells."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table{attrs}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _bytes_in(c: TopicCounters) -> int:
    return c.bytes_in


def _records_in(c: TopicCounters) -> int:
    return c.records_in


def _bytes_out(c: TopicCounters) -> int:
    return c.bytes_out


def charts_page(history: History, node_id: int, interval_ms: int) -> str:
    """Throughput per topic, lag per group and under-replicated partitions over time."""
    charts = (
        line_chart("bytes in per topic", "bytes/s", history.rates(_bytes_in)),
        line_chart("records in per topic", "records/s", history.rates(_records_in)),
        line_chart("bytes out per topic", "bytes/s", history.rates(_bytes_out)),
        line_chart("consumer lag per group", "records", history.lag()),
        line_chart(
            "under-replicated partitions", "partitions", {"cluster": history.under_replicated()}
        ),
    )
    intro = (
        f'<p class="muted">Node {node_id}: {len(history)} samples, one every '
        f"{interval_ms / 1000:g} s (http.history_sample_interval_ms). Throughput counts the "
        "replicas on this node (as leader for bytes and records in); lag the partitions it "
        "hosts.</p>"
    )
    return page(
        "charts",
        "/console/charts",
        [section("The last hour on this node", intro + "".join(charts), wide=True)],
    )


def configs_page(probe: NodeProbe) -> str:
    """Each topic's settings: its overrides in bold, the node's defaults for the rest."""
    config = probe.config
    defaults = topic_config_defaults(config.log, config.replication.default_min_insync_replicas)
    state = probe.view.state
    sections = []
    for topic in sorted(state.topics.values(), key=lambda t: t.name):
        rows = []
        for key in sorted({**defaults, **topic.configs}):
            override = topic.configs.get(key)
            value = override if override is not None else defaults.get(key, "")
            cls = "override" if override is not None else ""
            rows.append(
                (
                    escape(key),
                    f'<span class="{cls}" data-config="{escape(key)}">{escape(value)}</span>',
                    "topic override" if override is not None else "default",
                )
            )
        attrs = f' data-topic-configs="{escape(topic.name)}"'
        sections.append(section(topic.name, table(("setting", "value", "source"), rows, attrs)))
    if not sections:
        sections.append(section("Topic configurations", '<p class="muted">no topics yet</p>'))
    return page("topic configs", "/console/configs", sections)


def logdirs_page(probe: NodeProbe) -> str:
    """This node's log directory: its file system's space and each replica's bytes there."""
    log_dir = str(Path(probe.replicas.data_dir).resolve())
    try:
        space = disk_space(log_dir)
        summary = (
            f"<p><b>{escape(log_dir)}</b>: {si(space.usable_bytes)}B free of "
            f"{si(space.total_bytes)}B</p>"
        )
    except OSError as exc:
        summary = f'<p class="bad">{escape(log_dir)}: {escape(str(exc))}</p>'
    replicas = describe_replicas(probe.replicas.replicas(), None)
    total = sum(p.size_bytes for p in replicas)
    rows = [
        (
            escape(p.topic),
            str(p.partition),
            f'<span data-size="{escape(p.topic)}-{p.partition}">{p.size_bytes}</span>',
            si(p.size_bytes) + "B",
            str(p.offset_lag),
        )
        for p in replicas
    ]
    inner = summary + table(
        ("topic", "partition", "size (bytes)", "size", "offset lag"), rows, ' id="logdirs"'
    )
    inner += f'<p class="muted">{len(replicas)} replicas, {total} bytes in all</p>'
    return page(
        "log dirs", "/console/logdirs", [section(f"Node {probe.node_id} log dirs", inner, True)]
    )
