"""Partition files on a node's disk: damaging a stopped node's log tails, summarising copies.

Damage imitates what a crash or a bad disk leaves at the end of the active segment: the
last bytes torn off (a write cut short) or one byte flipped (a bad sector). Only the last
``.log`` segment of a partition is touched, only while the node is stopped; on restart the
store's recovery must cut the damaged tail and the replica must fetch it again from its
leader. Which partitions and which bytes come from the step's seed.

The summary of a copy (``replica_copy``) is what the replica check compares: the bytes of the
whole batches below the high watermark, all segments concatenated in offset order, so two
replicas that rolled segments at different offsets still compare equal.
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Any

from rillet.chaos.final_state import ReplicaCopy
from rillet.partition_store.layout import LOG_SUFFIX, parse_segment_base
from rillet.wire.batch import valid_prefix


def partition_dir(work_dir: str | Path, topic: str, partition: int) -> Path:
    return Path(work_dir) / "data" / f"{topic}-{partition}"


def segments(directory: Path) -> list[Path]:
    """The ``.log`` segments of a partition directory in offset order."""
    if not directory.is_dir():
        return []
    found = [(b, p) for p in directory.iterdir() if (b := parse_segment_base(p.name)) is not None]
    return [p for _, p in sorted(found) if p.name.endswith(LOG_SUFFIX)]


def corrupt_tails(
    work_dir: str | Path,
    topic: str,
    partitions: int,
    *,
    mode: str,
    nbytes: int,
    count: int,
    seed: int,
) -> list[dict[str, Any]]:
    """Damage the last segment of ``count`` partitions (chosen by ``seed``) of a stopped node.

    ``mode`` "truncate" cuts ``nbytes`` off the end; "flip" inverts one byte among the last
    ``nbytes``. Returns what was done per partition (for the history).
    """
    if mode not in ("truncate", "flip"):
        raise ValueError(f"unknown corruption mode {mode!r}")
    rng = random.Random(seed)
    chosen = sorted(rng.sample(range(partitions), min(count, partitions)))
    done: list[dict[str, Any]] = []
    for p in chosen:
        logs = segments(partition_dir(work_dir, topic, p))
        if not logs:
            done.append({"partition": p, "skipped": "no segment"})
            continue
        path = logs[-1]
        size = path.stat().st_size
        if size == 0:
            done.append({"partition": p, "file": path.name, "skipped": "empty"})
            continue
        cut = min(nbytes, size)
        if mode == "truncate":
            with open(path, "r+b") as f:
                f.truncate(size - cut)
            done.append({"partition": p, "file": path.name, "size": size, "truncated": cut})
        else:
            position = size - 1 - rng.randrange(cut)
            with open(path, "r+b") as f:
                f.seek(position)
                old = f.read(1)[0]
                f.seek(position)
                f.write(bytes([old ^ 0xFF]))
            done.append({"partition": p, "file": path.name, "size": size, "flipped": position})
    return done


def replica_copy(
    work_dir: str | Path, node: int, topic: str, partition: int, hw: int
) -> ReplicaCopy:
    """Summarise one node's copy of a partition up to the high watermark ``hw``."""
    try:
        data = b"".join(p.read_bytes() for p in segments(partition_dir(work_dir, topic, partition)))
    except OSError as exc:
        return ReplicaCopy(node, 0, 0, "", -1, error=f"unreadable: {exc}")
    _, batches = valid_prefix(data, max_batch_bytes=max(len(data), 1))
    prefix = 0
    log_end = batches[0].header.base_offset if batches else 0
    for view in batches:
        log_end = view.header.next_offset
        if view.header.next_offset <= hw:
            prefix = view.position + view.header.size
    digest = hashlib.sha256(data[:prefix]).hexdigest()
    return ReplicaCopy(node, len(data), prefix, digest, log_end)
