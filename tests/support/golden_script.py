"""Golden-file (datadriven) scripts: blocks of a command, ``----`` and its expected output.

Each file is a script of blocks::

    # comments and blank lines between blocks are ignored
    <command> <args...>
    ----
    <expected output lines>

A test runs every command and compares its output with the expected lines; with
``RILLET_REWRITE_GOLDEN=1`` it rewrites the file from the current behaviour instead (then
review the diff: it *is* the behaviour change).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REWRITE = os.environ.get("RILLET_REWRITE_GOLDEN") == "1"


@dataclass
class Block:
    command: str
    expected: list[str]


def parse(text: str) -> list[Block]:
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if not line or line.startswith("#"):
            i += 1
            continue
        if i + 1 >= len(lines) or lines[i + 1].strip() != "----":
            raise ValueError(f"line {i + 1}: expected '----' after {line!r}")
        i += 2
        expected = []
        while i < len(lines) and lines[i].strip():
            expected.append(lines[i].rstrip())
            i += 1
        blocks.append(Block(line, expected))
    return blocks


def render(original: str, outputs: list[list[str]]) -> str:
    """The file with each block's expected output replaced, comments kept."""
    result: list[str] = []
    lines = original.splitlines()
    i = 0
    block = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.strip().startswith("#"):
            result.append(line)
            i += 1
            continue
        result.extend([line, "----", *outputs[block]])
        block += 1
        i += 2
        while i < len(lines) and lines[i].strip():
            i += 1
    return "\n".join(result) + "\n"


def check_golden(path: Path, run: Callable[[str], list[str]]) -> None:
    """Run every block's command in order; compare (or, rewriting, record) the outputs."""
    text = path.read_text()
    blocks = parse(text)
    outputs = [run(block.command) for block in blocks]
    if REWRITE:
        path.write_text(render(text, outputs))
        return
    for block, output in zip(blocks, outputs, strict=True):
        assert output == block.expected, (
            f"{path.name}: {block.command!r} produced:\n"
            + "\n".join(output)
            + "\n(rerun with RILLET_REWRITE_GOLDEN=1 to accept)"
        )


def golden_files(testdata: Path) -> list[Path]:
    return sorted(testdata.glob("*.txt"))


def each_golden_file(testdata: Path) -> Any:
    """Parametrize a test with every script in ``testdata`` (named by file)."""
    return pytest.mark.parametrize("path", golden_files(testdata), ids=lambda p: p.stem)
