"""A real crash: SIGKILL a process that is appending, then recover in this one.

The property tests cut files at every byte; this checks the same promise end to end, with
real descriptors left open and nothing closed: every append that returned before the kill is
still there after recovery, and the log is a gap-free chain whose records are the ones
written at their offsets.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from store_batches import open_log, records_of

WRITER = """
import os, sys
from pathlib import Path
from rillet.partition_store.config import LogConfig
from rillet.partition_store.log import PartitionLog
from rillet.wire.batch import build_batch

log = PartitionLog.open(
    Path(sys.argv[1]), LogConfig(segment_bytes=64 * 1024, index_interval_bytes=512), 0, "t", 0
)
i = 0
while True:
    end = log.log_end_offset
    values = [b"%d;" % (end + k) * (1 + (i + k) % 40) for k in range(1 + i % 3)]
    result = log.append_as_leader(build_batch([(i, None, v, None) for v in values]), 0, i)
    os.write(1, b"%d\\n" % result.last_offset)
    i += 1
"""


def test_every_acknowledged_append_survives_sigkill(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(directory)], stdout=subprocess.PIPE)
    assert child.stdout is not None
    acknowledged = -1
    for line in child.stdout:
        acknowledged = int(line)
        if acknowledged >= 3000:
            break
    os.kill(child.pid, signal.SIGKILL)
    rest = child.stdout.read()
    child.wait()
    for line in rest.splitlines():
        acknowledged = max(acknowledged, int(line))
    assert child.returncode == -signal.SIGKILL

    log = open_log(directory, segment_bytes=64 * 1024, index_interval_bytes=512)
    assert not log.recovery_stats.clean_shutdown
    assert len(log.segments()) > 3
    assert log.log_end_offset > acknowledged
    offset = 0
    while offset < log.log_end_offset:
        for record_offset, value in records_of(log.read_bytes(offset, 1 << 16)):
            assert record_offset == offset
            assert value is not None and value.startswith(b"%d;" % offset)
            offset += 1
    log.close()
