"""One clean's file work in a child process, so the cleaner never holds the node's GIL.

The cleaner decodes and re-encodes records in Python; in a thread of the node it competes
with the event loop for the GIL, and produce latency shows it (docs/compaction.md, "Cost").
Here the job goes to a child (``python -m rillet.partition_store.clean_worker``) as CBOR on
its stdin, the source segments' duplicated descriptors with it (``pass_fds``: the child
reads the very files the plan named even if the live log deletes or renames them
meanwhile), and the child runs at ``log_cleaner_process_niceness`` so the OS favours the
node. The I/O budget is enforced in the child. The answer comes back as CBOR on its stdout
and is checked against the job (``clean_job_codec``) before the node installs anything.

A process per clean, not a long-lived worker: descriptors reach a child at its start
(``pass_fds``), where a long-lived worker would need them passed over a Unix socket
(SCM_RIGHTS); killing the child is all there is to cancelling a clean, with no worker state
to resynchronise; a crash costs one clean, not a worker to restart; and each clean's key map
(up to ``log_cleaner_dedupe_buffer_size``) goes back to the OS when the child exits instead
of staying in anyone's heap. The price: each clean starts an interpreter and imports the
store's modules, about 0.15 s of CPU in the child (docs/compaction.md, "Cost"); where cleans
come every second or faster, a long-lived worker fed over a socket would save that.

Cancelling (node shutdown) kills the child at once (SIGKILL) and waits for it. A child that
is killed, crashes or answers garbage is a :class:`CleanerProcessError`; either way nothing
is installed, and what the child left in the staging directory falls under the crash-safe
swap's rules (``partition_store/cleaner_swap.py``).
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Sequence

import trio

from rillet.partition_store.clean_job_codec import decode_answer, encode_job
from rillet.partition_store.cleaning_pass import job_for
from rillet.partition_store.errors import CleanerProcessError
from rillet.partition_store.log import PartitionLog
from rillet.partition_store.segment_cleaner import (
    DEFAULT_MAP_MAX_BYTES,
    UNLIMITED,
    CleanJob,
    CleanResult,
    close_sources,
)

WORKER_ARGV = (sys.executable, "-m", "rillet.partition_store.clean_worker")
STDERR_TAIL_CHARS = 400


async def clean_in_process(
    job: CleanJob,
    io_max_bytes_per_second: float,
    niceness: int,
    argv: Sequence[str] = WORKER_ARGV,
    *,
    task_status: trio.TaskStatus[trio.Process] = trio.TASK_STATUS_IGNORED,
) -> CleanResult:
    """Run ``job`` in a child (``argv``: the worker; tests give another) and return its
    checked result; closes the job's descriptors. With ``nursery.start`` it reports the
    child's :class:`trio.Process` once started."""
    try:
        done = await trio.run_process(
            list(argv),
            stdin=encode_job(job, io_max_bytes_per_second, niceness),
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            deliver_cancel=_kill,
            pass_fds=[s.fd for s in job.sources.values()],
            task_status=task_status,
        )
    finally:
        close_sources(job)
    if done.returncode != 0:
        raise CleanerProcessError(
            f"the cleaner process {_exit_text(done.returncode)}: {_tail(done.stderr)}"
        )
    return decode_answer(done.stdout, job)


async def clean_now_in_process(
    log: PartitionLog,
    now_ms: int,
    io_max_bytes_per_second: float = UNLIMITED,
    niceness: int = 0,
    map_max_bytes: int = DEFAULT_MAP_MAX_BYTES,
) -> CleanResult | None:
    """``cleaning_pass.clean_now`` with the file work in a child process (tests, the
    bench): plan, clean, install; None when there was nothing to clean."""
    job = job_for(log, now_ms, map_max_bytes=map_max_bytes)
    if job is None:
        return None
    result = await clean_in_process(job, io_max_bytes_per_second, niceness)
    log.install_cleaned(job, result.staged, result.dirty_end)
    return result


async def _kill(process: trio.Process) -> None:
    process.kill()


def _exit_text(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with status {returncode}"


def _tail(stderr: bytes) -> str:
    lines = stderr.decode(errors="replace").strip().splitlines()
    return lines[-1][-STDERR_TAIL_CHARS:] if lines else "no message"
