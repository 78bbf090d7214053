"""What the docs tests read from a Markdown page: its links, its anchors, its shell blocks.

The docs promise commands and point at each other; these parsers let tests hold them to it
without a Markdown library (the pages use a small, regular subset: ``#`` headings, fenced
blocks, inline ``[text](target)`` links and ``<a id="...">`` anchors).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ILLUSTRATION_MARK = "<!-- illustration -->"
_FENCE = re.compile(r"^(```+|~~~+)\s*([\w-]*)")
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")
_INLINE_CODE = re.compile(r"`[^`]*`")


@dataclass(frozen=True)
class ShellBlock:
    """A fenced ``sh`` block: its 1-based first line, its text, and whether it only illustrates."""

    line: int
    text: str
    illustration: bool


def _prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line outside fenced blocks."""
    lines: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        match = _FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
        elif fence is not None and line.strip() == fence:
            fence = None
        elif fence is None:
            lines.append((number, line))
    return lines


def links(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every inline link outside code."""
    found: list[tuple[int, str]] = []
    for number, line in _prose_lines(text):
        for match in _LINK.finditer(_INLINE_CODE.sub("", line)):
            found.append((number, match.group(1)))
    return found


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    kept = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return kept.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor a link may name: headings' slugs (repeats numbered) and ``<a id>`` tags."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in _prose_lines(text):
        found.update(_HTML_ANCHOR.findall(line))
        if line.startswith("#"):
            base = slug(line.lstrip("#"))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def shell_blocks(text: str) -> list[ShellBlock]:
    """Every fenced ``sh`` block in order; one just after the illustration mark only illustrates."""
    blocks: list[ShellBlock] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        match = _FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        fence, language = match.group(1), match.group(2)
        end = index + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        if language == "sh":
            before = [line for line in lines[:index] if line.strip()]
            marked = bool(before) and before[-1].strip() == ILLUSTRATION_MARK
            blocks.append(ShellBlock(index + 1, "\n".join(lines[index + 1 : end]), marked))
        index = end + 1
    return blocks
