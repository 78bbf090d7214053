"""The process's limit on open files, raised as far as the system allows at start.

Each hosted partition keeps one descriptor open per segment (its ``.log``; the indexes are
opened only to write or fsync them), each connection one more. A node with thousands of
partitions needs more than the usual soft limit of 1,024 (Kafka asks operators for 100,000
or more), so the node raises its soft limit to the hard one, as Go's runtime does, and
says at start how many partitions that leaves room for.
"""

from __future__ import annotations

import logging
import resource

log = logging.getLogger(__name__)

# Descriptors a node keeps for itself: listeners, Raft, files of the metadata log, the
# loop's own (epoll, wakeup socket), stdio, the data directory lock.
RESERVED_DESCRIPTORS = 256


def raise_open_file_limit() -> int:
    """Raise the soft RLIMIT_NOFILE to the hard limit (bounded); the soft limit after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError) as exc:
            log.warning("cannot raise the open-file limit from %d to %d: %s", soft, target, exc)
    return soft


def segment_capacity(open_files: int, max_connections: int) -> int:
    """How many segments (one descriptor each) fit beside the connections."""
    return max(open_files - max_connections - RESERVED_DESCRIPTORS, 0)
