"""An fsync to run off the event loop.

The plan holds duplicated file descriptors, so the log may roll, close or delete segments
while the fsync runs in a worker thread; ``run`` touches nothing but its own fds.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(slots=True)
class FlushPlan:
    fds: list[int]
    up_to_offset: int  # every offset below this is durable once run() returns
    records: int  # appended records this flush covers (for flush_messages accounting)
    done: bool = False

    def run(self) -> None:
        """fdatasync every fd, then close them. Blocking: call from a worker thread."""
        try:
            for fd in self.fds:
                os.fdatasync(fd)
        finally:
            for fd in self.fds:
                os.close(fd)
            self.fds = []
        self.done = True
