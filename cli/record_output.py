"""How ``rillet consume`` prints records: text lines with chosen fields, or JSON lines.

Both print one line per record, so either output streams into ``grep``, ``jq`` or a file.
"""

from __future__ import annotations

import argparse
import base64
import json
from dataclasses import dataclass
from typing import Any

from rillet.client import ConsumerRecord


def json_bytes(data: bytes | None) -> str | dict[str, str] | None:
    """A key, value or header value in JSON: the text when the bytes are valid UTF-8, else
    ``{"base64": "..."}`` (so text stays readable and binary survives); null stays null."""
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}


def json_line(r: ConsumerRecord) -> str:
    """One record as one JSON object: topic, partition, offset, timestamp (ms), key, value,
    headers (a list of {"key", "value"}: order and repeated keys are kept)."""
    document: dict[str, Any] = {
        "topic": r.topic,
        "partition": r.partition,
        "offset": r.offset,
        "timestamp": r.timestamp_ms,
        "key": json_bytes(r.key),
        "value": json_bytes(r.value),
        "headers": [{"key": k, "value": json_bytes(v)} for k, v in r.headers or ()],
    }
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class RecordFormat:
    """How ``consume`` prints a record, one line each: JSON, or text with the optional
    fields in the order partition:offset, timestamp, headers, key, then the value."""

    separator: str = "\t"
    offset: bool = False
    timestamp: bool = False
    key: bool = False
    headers: bool = False
    json: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> RecordFormat:
        return cls(
            args.key_separator,
            args.print_offset,
            args.print_timestamp,
            args.print_key,
            args.print_headers,
            args.output == "json",
        )

    def line(self, r: ConsumerRecord) -> str:
        if self.json:
            return json_line(r)
        parts = []
        if self.offset:
            parts.append(f"{r.partition}:{r.offset}")
        if self.timestamp:
            parts.append(str(r.timestamp_ms))
        if self.headers:
            parts.append(
                ",".join(
                    f"{k}={'null' if v is None else v.decode('utf-8', errors='replace')}"
                    for k, v in r.headers or ()
                )
            )
        if self.key:
            parts.append("" if r.key is None else r.key.decode("utf-8", errors="replace"))
        parts.append("" if r.value is None else r.value.decode("utf-8", errors="replace"))
        return self.separator.join(parts)
