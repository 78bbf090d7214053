"""A one-line progress display for long ``rillet produce`` runs, redrawn in place on stderr.

Sans-I/O: ``ProgressLine`` is told the time and the counts and says what to draw and when;
the command decides whether to draw at all (only when stderr is a terminal, so logs and
pipelines never receive carriage returns). A small class of our own rather than a progress
bar library: one line of text is all it draws.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

REDRAW_INTERVAL_S = 0.5
CLEAR_LINE = "\r\x1b[K"  # back to column 0, erase to the end of the line


def input_size_bytes(fd: int) -> int | None:
    """Bytes left to read from ``fd`` when it is a regular file (``< file``), else None."""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        return max(info.st_size - os.lseek(fd, 0, os.SEEK_CUR), 0)
    except OSError:
        return None


def wanted(no_progress: bool, stdin_is_tty: bool, stderr_is_tty: bool) -> bool:
    """Draw progress only for a person watching (stderr a terminal) who is not typing the
    input (stdin not a terminal), unless --no-progress."""
    return not no_progress and stderr_is_tty and not stdin_is_tty


@dataclass
class ProgressLine:
    started_s: float
    total_bytes: int | None = None
    interval_s: float = REDRAW_INTERVAL_S
    next_draw_s: float = 0.0

    def __post_init__(self) -> None:
        self.next_draw_s = self.started_s + self.interval_s

    def due(self, now_s: float) -> bool:
        """True at most once per interval (the caller then draws ``text``)."""
        if now_s < self.next_draw_s:
            return False
        self.next_draw_s = now_s + self.interval_s
        return True

    def text(self, now_s: float, read_bytes: int, sent: int, acked: int, failed: int) -> str:
        elapsed_s = max(now_s - self.started_s, 1e-9)
        parts = [f"{acked:,} of {sent:,} records acknowledged"]
        if failed:
            parts.append(f"{failed:,} failed")
        if self.total_bytes:
            share = min(read_bytes / self.total_bytes, 1.0)
            parts.append(f"{share:.0%} of {self.total_bytes / 2**20:,.1f} MiB read")
        parts.append(f"{acked / elapsed_s:,.0f} records/s")
        return ", ".join(parts)
