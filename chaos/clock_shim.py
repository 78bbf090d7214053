"""Test-only entry point: run a node whose wall clock is off by what a file says.

The chaos clock faults (``clock-skew``, ``clock-jump``) need a node whose wall clock is
hours ahead or behind, or steps during the run, while the machine's clock and every other
process keep the true time. The harness runs each node as
``python -m rillet.chaos.clock_shim CLOCK_FILE ARGV...`` (``wrap``): this replaces
``time.time`` and ``time.time_ns`` — what rillet reads the wall clock with — by the true
time plus the file's offset, then runs the node's own argv in this process. The monotonic
clocks (``time.monotonic``, trio's clock) are left alone, as a stepped system clock leaves
them. A thread re-reads the file when it changes (every ``POLL_S``), so the nemesis moves
a running node's clock by writing the file.

The file is JSON: ``offset_ms`` (added to the true time), and optionally ``flip_ms`` and
``period_ms``: an erratic clock that is ``flip_ms`` further off every other ``period_ms``
(a clock stepped back and forth, as by a misconfigured time sync). The installed ``rillet``
command never goes through here.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import threading
import time
from pathlib import Path
from typing import Any

POLL_S = 0.05


def write_clock(path: Path, offset_ms: int, flip_ms: int = 0, period_ms: int = 0) -> None:
    """Set the clock the shimmed node at ``path`` reads (atomically: a rename)."""
    tmp = path.with_suffix(".tmp")
    body = {"offset_ms": offset_ms, "flip_ms": flip_ms, "period_ms": period_ms}
    tmp.write_text(json.dumps(body), encoding="utf-8")
    os.replace(tmp, path)


def wrap_with(clock_file: Path) -> list[str]:
    """The argv prefix that runs a node's argv (without its interpreter) under the shim."""
    return [sys.executable, "-m", "rillet.chaos.clock_shim", str(clock_file)]


class ShiftedClock:
    """The wall clock plus the file's offset; ``install`` puts it in place of ``time``'s."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._true_time_ns = time.time_ns
        self._offset_ns = 0
        self._flip_ns = 0
        self._period_ns = 0
        self._seen: tuple[int, int] | None = None  # (inode, mtime): each write is a new file
        self._stop = threading.Event()

    def time_ns(self) -> int:
        offset = self._offset_ns
        if self._period_ns > 0 and (time.monotonic_ns() // self._period_ns) % 2:
            offset += self._flip_ns
        return self._true_time_ns() + offset

    def time(self) -> float:
        return self.time_ns() / 1e9

    def reload(self) -> None:
        """Read the file again if it changed (a missing or half-written file: no change)."""
        try:
            st = self._path.stat()
            if (st.st_ino, st.st_mtime_ns) == self._seen:
                return
            raw: dict[str, Any] = json.loads(self._path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        self._seen = (st.st_ino, st.st_mtime_ns)
        self._offset_ns = int(raw.get("offset_ms", 0)) * 1_000_000
        self._flip_ns = int(raw.get("flip_ms", 0)) * 1_000_000
        self._period_ns = max(0, int(raw.get("period_ms", 0))) * 1_000_000

    def install(self) -> None:
        self.reload()
        time.time_ns = self.time_ns
        time.time = self.time
        threading.Thread(target=self._watch, name="clock-shim", daemon=True).start()

    def _watch(self) -> None:
        while not self._stop.wait(POLL_S):
            self.reload()


def main(argv: list[str]) -> None:
    if len(argv) < 2:
        sys.exit("usage: python -m rillet.chaos.clock_shim CLOCK_FILE (-m MODULE | SCRIPT) ARGS")
    ShiftedClock(Path(argv[0])).install()
    rest = argv[1:]
    if rest[0] == "-m":
        sys.argv = [rest[1], *rest[2:]]
        runpy.run_module(rest[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = rest
        sys.path.insert(0, str(Path(rest[0]).resolve().parent))  # as `python SCRIPT` does
        runpy.run_path(rest[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
