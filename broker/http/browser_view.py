"""The message browser's page: a plain HTML form (no script) and the records it found."""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape
from urllib.parse import quote

from rillet.broker.http.console_views import page, section, table
from rillet.broker.http.message_browser import FORMATS, BrowsePage, BrowseQuery


def _form(query: BrowseQuery | None, topics: list[str]) -> str:
    topic = query.topic if query else (topics[0] if topics else "")
    partition = query.partition if query else 0
    offset = "" if query is None or query.offset is None else str(query.offset)
    ts = "" if query is None or query.timestamp_ms is None else str(query.timestamp_ms)
    fmt = query.format if query else "text"
    options = "".join(
        f"<option{' selected' if f == fmt else ''}>{escape(f)}</option>" for f in FORMATS
    )
    names = "".join(f'<option value="{escape(t)}">' for t in topics)
    return (
        '<form method="get" action="/console/browse" style="display:flex;gap:10px;'
        'flex-wrap:wrap;align-items:end">'
        f'<label>topic<br><input name="topic" list="topics" value="{escape(topic)}"></label>'
        f'<datalist id="topics">{names}</datalist>'
        f'<label>partition<br><input name="partition" size="4" value="{partition}"></label>'
        f'<label>from offset<br><input name="offset" size="10" value="{offset}"></label>'
        f'<label>or from time (ms since epoch)<br><input name="timestamp_ms" size="14" '
        f'value="{ts}"></label>'
        f'<label>show as<br><select name="format">{options}</select></label>'
        "<button>show</button></form>"
    )


def _time(timestamp_ms: int) -> str:
    """The record's timestamp in ms and, when it is a plausible date, in UTC."""
    try:
        when = datetime.fromtimestamp(timestamp_ms / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return str(timestamp_ms)
    return f"{timestamp_ms}<br>{when.isoformat(timespec='milliseconds')[:23]}Z"


def _headers(headers: tuple[tuple[str, str], ...]) -> str:
    return "<br>".join(f"{escape(k)}: <pre>{escape(v)}</pre>" for k, v in headers) or "-"


def browse_page(result: BrowsePage | None, topics: list[str], max_records: int) -> str:
    """The form, and when a partition was asked for, its page of records."""
    sections = [section("Messages", _form(result.query if result else None, topics), True)]
    if result is not None:
        q = result.query
        rows = [
            (
                str(r.offset),
                _time(r.timestamp_ms),
                f"<pre>{escape(r.key)}</pre>",
                f"<pre>{escape(r.value)}</pre>",
                _headers(r.headers),
                '<span class="crc">valid</span>',
            )
            for r in result.records
        ]
        attrs = f' id="records" data-topic="{escape(q.topic)}" data-partition="{q.partition}"'
        inner = (
            f'<p class="muted">{escape(q.topic)}-{q.partition}: log start '
            f"{result.log_start_offset}, high watermark {result.high_watermark}; "
            f"{len(result.records)} records from offset {result.start_offset} (at most "
            f"{max_records} a page).</p>"
        )
        columns = ("offset", "timestamp (ms, UTC)", "key", "value", "headers", "batch CRC")
        inner += table(columns, rows, attrs)
        for damage in result.invalid_batches:
            inner += f'<p class="bad">batch CRC invalid at {escape(damage)}</p>'
        if result.note:
            inner += f'<p class="muted">{escape(result.note)}</p>'
        if result.next_offset < result.high_watermark and result.records:
            inner += (
                f'<p><a href="/console/browse?topic={escape(quote(q.topic))}&amp;partition='
                f'{q.partition}&amp;offset={result.next_offset}&amp;format={q.format}">'
                "next page</a></p>"
            )
        sections.append(section(f"{q.topic}-{q.partition}", inner, True))
    return page("messages", "/console/browse", sections)
