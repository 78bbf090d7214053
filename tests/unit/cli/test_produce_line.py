"""``rillet produce`` line formats: per-line timestamps, headers and keys."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rillet.cli.main import build_parser
from rillet.cli.produce_line import BadLineError, LineFormat, ParsedLine, parse_headers

TAB = LineFormat(key=b"\t", headers=b"\t", timestamp=b"\t")


def test_plain_lines_are_values() -> None:
    assert LineFormat().parse(b"a\tb") == ParsedLine(b"a\tb")


def test_every_field() -> None:
    assert TAB.parse(b"1795521361348\ta=1,b\tk\tv\tw") == ParsedLine(
        b"v\tw", b"k", [("a", b"1"), ("b", None)], 1795521361348
    )
    assert TAB.parse(b"2026-11-24T10:00:00Z\t\t\tv") == ParsedLine(b"v", b"", None, 1795514400000)


def test_key_separator_missing_means_no_key() -> None:
    assert LineFormat(key=b":").parse(b"value") == ParsedLine(b"value")


@pytest.mark.parametrize(
    ("fmt", "line", "message"),
    [
        (LineFormat(timestamp=b"|"), b"no stamp", "no timestamp separator"),
        (LineFormat(timestamp=b"|"), b"soon|v", "bad timestamp"),
        (LineFormat(timestamp=b"|"), b"\xff|v", "bad timestamp"),
        (LineFormat(headers=b"|"), b"a=1", "no header separator"),
        (LineFormat(headers=b"|"), b"=1|v", "has no key"),
        (LineFormat(headers=b"|"), b"\xff=1|v", "not UTF-8"),
    ],
)
def test_bad_lines_are_refused_with_a_reason(fmt: LineFormat, line: bytes, message: str) -> None:
    with pytest.raises(BadLineError, match=message):
        fmt.parse(line)


def test_headers_keep_order_and_repeats() -> None:
    assert parse_headers(b"a=1,a=2,,c=") == [("a", b"1"), ("a", b"2"), ("c", b"")]


@given(st.binary(max_size=64))
def test_any_line_parses_or_is_refused(line: bytes) -> None:
    try:
        TAB.parse(line)
    except BadLineError:
        pass


def test_flags_build_the_format() -> None:
    args = build_parser().parse_args(
        ["produce", "t", "--timestamp-separator", "|", "--header-separator", ";"]
    )
    assert LineFormat.from_args(args) == LineFormat(None, b";", b"|")
