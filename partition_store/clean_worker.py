"""The log cleaner's child process: ``python -m rillet.partition_store.clean_worker``.

The node starts one for each clean (``broker/replica/clean_process.py``) so that the file
work (decoding and re-encoding records in Python) runs on its own interpreter and its own
GIL, at a lower CPU priority, never holding up the node's event loop. It reads one CBOR job
on stdin (``clean_job_codec``), takes the job's niceness, runs the same file work as the
thread path (``cleaning_pass.work``, paced by the job's I/O budget) on the inherited source
descriptors, and writes one CBOR answer on stdout.

Exit status 0 with an answer, also when the clean itself failed (a damaged source, a full
disk: the answer carries the error's line); 2 when the job could not be read. Anything else
(a signal, a crash) the node treats as a failed clean. The staging directory it writes is
the thread path's, so a child killed at any point leaves only what ``cleaner_swap``'s rules
already clean up.
"""

from __future__ import annotations

import os
import sys

from rillet.partition_store.clean_job_codec import decode_job, encode_failure, encode_result
from rillet.partition_store.cleaning_pass import work
from rillet.partition_store.errors import CleanerProcessError, StoreError
from rillet.partition_store.segment_cleaner import IoBudget

BAD_JOB_EXIT_STATUS = 2
# At the lowest priority the child also leaves the normal scheduling class for Linux's idle
# one (SCHED_IDLE): it then runs only on a CPU nothing else wants, so a woken event loop
# never waits for it (a niced task still takes its share of a busy CPU).
IDLE_CLASS_NICENESS = 19


def _enter_idle_class() -> None:
    setter = getattr(os, "sched_setscheduler", None)
    idle = getattr(os, "SCHED_IDLE", None)
    if setter is None or idle is None:
        return  # not Linux: the niceness alone
    try:
        setter(0, idle, os.sched_param(0))
    except OSError:
        pass  # refused (a container's seccomp profile): the niceness alone


def main() -> int:
    try:
        job, io_max_bytes_per_second, niceness = decode_job(sys.stdin.buffer.read())
    except CleanerProcessError as exc:
        print(f"clean_worker: {exc}", file=sys.stderr)
        return BAD_JOB_EXIT_STATUS
    if niceness:
        os.nice(niceness)
    if niceness >= IDLE_CLASS_NICENESS:
        _enter_idle_class()
    try:
        answer = encode_result(work(job, IoBudget(io_max_bytes_per_second)))
    except (StoreError, OSError) as exc:
        answer = encode_failure(exc)
    sys.stdout.buffer.write(answer)
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
