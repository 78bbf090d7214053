"""How ``rillet produce`` reads one stdin line: optional timestamp, headers and key, then the
value, each optional field ended by its own separator.

The order is the one ``rillet consume --print-timestamp --print-headers --print-key``
prints, so a dump made with those flags (and one separator, e.g. a tab) is read back into the
same records.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from rillet.broker.errors import BrokerError
from rillet.cli.common import timestamp_ms_arg

Headers = list[tuple[str, bytes | None]]


class BadLineError(BrokerError):
    """A stdin line does not have the fields its separators ask for; this line is not sent."""


@dataclass(frozen=True, slots=True)
class ParsedLine:
    value: bytes
    key: bytes | None = None
    headers: Headers | None = None
    timestamp_ms: int | None = None


def split_key(line: bytes, separator: bytes | None) -> tuple[bytes | None, bytes]:
    """(key, value): the key is what precedes the first separator; no separator, no key."""
    if separator:
        key, sep, value = line.partition(separator)
        if sep:
            return key, value
    return None, line


def parse_headers(field: bytes) -> Headers:
    """``k=v,k=v`` -> [(k, v)]: a pair without ``=`` is a header with a null value; an
    empty field is no header."""
    headers: Headers = []
    for pair in field.split(b","):
        if not pair:
            continue
        key, eq, value = pair.partition(b"=")
        name = key.decode("utf-8", errors="strict") if key else ""
        if not name:
            raise BadLineError(f"header {pair!r} has no key")
        headers.append((name, value if eq else None))
    return headers


@dataclass(frozen=True, slots=True)
class LineFormat:
    """Separators of the optional leading fields (None: the field is not in the lines)."""

    key: bytes | None = None
    headers: bytes | None = None
    timestamp: bytes | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> LineFormat:
        def encoded(text: str | None) -> bytes | None:
            return text.encode() if text else None

        return cls(
            encoded(args.key_separator),
            encoded(args.header_separator),
            encoded(args.timestamp_separator),
        )

    def parse(self, line: bytes) -> ParsedLine:
        """The record a line stands for; BadLineError when a required field is missing or
        malformed. (A line without the key separator still has no key, as before.)"""
        rest = line
        timestamp_ms = None
        if self.timestamp:
            stamp, sep, rest = rest.partition(self.timestamp)
            if not sep:
                raise BadLineError(f"no timestamp separator {self.timestamp!r} in the line")
            try:
                timestamp_ms = timestamp_ms_arg(stamp.decode("utf-8"))
            except (argparse.ArgumentTypeError, UnicodeDecodeError) as exc:
                raise BadLineError(f"bad timestamp: {exc}") from None
        headers = None
        if self.headers:
            field, sep, rest = rest.partition(self.headers)
            if not sep:
                raise BadLineError(f"no header separator {self.headers!r} in the line")
            try:
                headers = parse_headers(field) or None
            except UnicodeDecodeError:
                raise BadLineError("a header key is not UTF-8") from None
        key, value = split_key(rest, self.key)
        return ParsedLine(value, key, headers, timestamp_ms)
