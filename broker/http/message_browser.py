"""The console's message browser: one bounded page of a partition's committed records.

A page starts at an offset, or at the first batch whose timestamp reaches a time (the
lookup ListOffsets does by time), and holds at most ``http.console_browse_max_records``
records from at most ``http.console_browse_max_bytes`` of log, read through the log's own
read path (which CRC-checks bytes it has not checked yet and stops before damage) and only up
to the high watermark. :func:`read_page` runs on the event loop (one bounded ``pread``; the
log is not shared with threads); :func:`decode_page`, pure, checks each batch's CRC again
and decodes the batches holding the page's records, in a worker thread. Nothing is written.
The page shows record data, so the endpoint's token guards it like the rest of the console
(:mod:`~rillet.broker.http.access`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from rillet.broker.http.errors import HttpError
from rillet.partition_store.errors import LogDamaged, StoreError
from rillet.partition_store.log import PartitionLog
from rillet.wire.batch import check_batch, decode_records, peek_length
from rillet.wire.errors import WireError

FORMATS = ("text", "json", "hex")
SHOWN_BYTES = 4096  # of one key, value or header value; the rest is elided


class BrowsedReplica(Protocol):
    """What the browser reads of a replica (a ``PartitionReplica``)."""

    @property
    def log(self) -> PartitionLog: ...
    @property
    def high_watermark(self) -> int: ...
    @property
    def deleted(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class BrowseQuery:
    topic: str
    partition: int
    offset: int | None  # None: from the timestamp, or from the log start
    timestamp_ms: int | None
    format: str


@dataclass(frozen=True, slots=True)
class ShownRecord:
    offset: int
    timestamp_ms: int
    key: str
    value: str
    headers: tuple[tuple[str, str], ...]  # every record shown is of a batch whose CRC holds


@dataclass(frozen=True, slots=True)
class BrowsePage:
    query: BrowseQuery
    start_offset: int
    records: tuple[ShownRecord, ...]
    next_offset: int  # where the next page starts
    high_watermark: int
    log_start_offset: int
    invalid_batches: tuple[str, ...]  # "offset N: reason" of batches failing their check
    note: str = ""  # why the page is empty or stops early


def _int(params: Mapping[str, str], name: str) -> int | None:
    raw = params.get(name, "").strip()
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError:
        raise HttpError(400, f"{name} must be an integer, not {raw[:40]!r}") from None


def parse_query(params: Mapping[str, str]) -> BrowseQuery:
    topic = params.get("topic", "")
    if not topic:
        raise HttpError(400, "topic is required")
    partition = _int(params, "partition") or 0
    fmt = params.get("format", "text") or "text"
    if fmt not in FORMATS:
        raise HttpError(400, f"format must be one of {', '.join(FORMATS)}, not {fmt[:20]!r}")
    offset, timestamp_ms = _int(params, "offset"), _int(params, "timestamp_ms")
    if min(offset or 0, timestamp_ms or 0) < 0:
        raise HttpError(400, "offset and timestamp_ms must not be negative")
    return BrowseQuery(topic, partition, offset, timestamp_ms, fmt)


def shown(data: bytes | None, fmt: str) -> str:
    """``data`` as the page shows it: UTF-8 text, pretty JSON (text when it is not JSON) or
    hex, cut to SHOWN_BYTES."""
    if data is None:
        return "(null)"
    cut, rest = data[:SHOWN_BYTES], len(data) - SHOWN_BYTES
    suffix = f" ... ({len(data)} bytes)" if rest > 0 else ""
    if fmt == "hex":
        return cut.hex(" ") + suffix
    text = cut.decode("utf-8", errors="replace")
    if fmt == "json" and rest <= 0:
        try:
            return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
        except ValueError:
            pass
    return text + suffix


@dataclass(frozen=True, slots=True)
class RawPage:
    """The bytes of a page as read on the event loop, before any record is decoded."""

    query: BrowseQuery
    start_offset: int
    data: bytes  # whole batches, at most max_bytes (or one larger first batch)
    high_watermark: int
    log_start_offset: int
    damaged: str = ""  # the log refused to read at start_offset: why
    note: str = ""


def read_page(replica: BrowsedReplica | None, query: BrowseQuery, max_bytes: int) -> RawPage:
    """Where the page starts and its bytes, from this node's replica of the partition (None:
    it hosts none). Runs on the event loop: the log is not shared with threads."""
    if replica is None or replica.deleted:
        raise HttpError(404, f"this node hosts no replica of {query.topic}-{query.partition}")
    log, hw = replica.log, replica.high_watermark
    log_start = log.log_start_offset
    start = log_start if query.offset is None else query.offset
    note = ""
    if query.offset is None and query.timestamp_ms is not None:
        found = log.offset_for_timestamp(query.timestamp_ms)
        if found is None or found[0] >= hw:
            start, note = hw, "no committed record at or after that time"
        else:
            start = found[0]
    start = min(max(start, log_start), hw)
    try:
        data = log.read_bytes(start, max_bytes, max_offset=hw)
    except LogDamaged as exc:
        return RawPage(query, start, b"", hw, log_start, str(exc), "the batch here fails its check")
    except StoreError as exc:
        return RawPage(query, start, b"", hw, log_start, note=f"cannot read at {start}: {exc}")
    if not data and not note:
        note = "no committed records from here"
    return RawPage(query, start, data, hw, log_start, note=note)


def decode_page(raw: RawPage, max_records: int) -> BrowsePage:
    """Check each batch's CRC and decode the records of the page (pure: a worker thread may
    run it). Batches after the page's last record are not decoded; one failing its check
    ends the page and is named."""
    query, start, data = raw.query, raw.start_offset, raw.data
    records: list[ShownRecord] = []
    invalid = [f"offset {start}: {raw.damaged}"] if raw.damaged else []
    note, position, at = raw.note, start, 0
    while at < len(data) and len(records) < max_records:
        base, size = peek_length(data, at)
        try:
            check_batch(data, at, len(data) - at, max_batch_bytes=len(data) - at)
            batch = decode_records(data, at)
        except WireError as exc:
            invalid.append(f"offset {base}: {exc}")
            note = "stopped at a batch that fails its check"
            break
        for record in batch:
            if record.offset < start or len(records) >= max_records:
                continue
            records.append(
                ShownRecord(
                    record.offset,
                    record.timestamp_ms,
                    shown(record.key, query.format),
                    shown(record.value, query.format),
                    tuple((k, shown(v, query.format)) for k, v in record.headers),
                )
            )
            position = record.offset + 1
        at += size
    return BrowsePage(
        query,
        start,
        tuple(records),
        position,
        raw.high_watermark,
        raw.log_start_offset,
        tuple(invalid),
        note,
    )
