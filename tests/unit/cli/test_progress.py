"""The produce progress line: when it is drawn and what it says."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rillet.cli.progress import ProgressLine, input_size_bytes, wanted


def test_drawn_at_most_once_per_interval() -> None:
    progress = ProgressLine(started_s=10.0, interval_s=0.5)
    assert not progress.due(10.2)
    assert progress.due(10.5)
    assert not progress.due(10.9)
    assert progress.due(11.0)


def test_text_with_and_without_a_known_size() -> None:
    progress = ProgressLine(started_s=0.0, total_bytes=4 * 2**20)
    assert progress.text(2.0, 2**20, 1500, 1000, 0) == (
        "1,000 of 1,500 records acknowledged, 25% of 4.0 MiB read, 500 records/s"
    )
    assert ProgressLine(0.0).text(1.0, 10, 3, 2, 1) == (
        "2 of 3 records acknowledged, 1 failed, 2 records/s"
    )


@pytest.mark.parametrize(
    ("no_progress", "stdin_tty", "stderr_tty", "expected"),
    [
        (False, False, True, True),
        (True, False, True, False),  # --no-progress
        (False, True, True, False),  # a person typing lines
        (False, False, False, False),  # stderr to a file or a pipe
    ],
)
def test_only_for_a_watching_terminal(
    no_progress: bool, stdin_tty: bool, stderr_tty: bool, expected: bool
) -> None:
    assert wanted(no_progress, stdin_tty, stderr_tty) is expected


def test_input_size_of_a_file_and_of_a_pipe(tmp_path: Path) -> None:
    f = tmp_path / "in.txt"
    f.write_bytes(b"x" * 100)
    with f.open("rb") as handle:
        os.read(handle.fileno(), 30)
        assert input_size_bytes(handle.fileno()) == 70  # what is left to read
    read_fd, write_fd = os.pipe()
    try:
        assert input_size_bytes(read_fd) is None
    finally:
        os.close(read_fd)
        os.close(write_fd)
