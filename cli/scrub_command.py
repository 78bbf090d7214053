"""``rillet scrub``: check a node's stored batches for bit rot now.

The node's data directory decides what happens, as an operator expects of a local disk
check:

- the node is running (it holds the directory's lock): it is asked (SIGUSR1) to start a
  scrub pass now; the command waits for the pass to finish and prints what it found. The node
  repairs damaged replicas itself, from healthy copies (docs/replication.md);
- the node is stopped: every segment is checked read-only, here, and the damage listed. The
  node repairs it once started (it never serves a damaged batch).

Exit status 0 when nothing is damaged, 1 when something is (or the check failed).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from rillet.broker.node import LOCK_FILE
from rillet.broker.replica.log_scrubber import SCRUB_STATUS_FILE
from rillet.cli.common import EXIT_FAILED, EXIT_OK
from rillet.partition_store.offline_scrub import partition_dirs, scrub_partition_dir

POLL_S = 0.2


def register(sub: Any) -> None:
    p = sub.add_parser(
        "scrub",
        help="check a node's stored batches for bit rot now (running or stopped node)",
        description=(
            "Re-check the CRC of every stored batch of one node. A running node is asked to "
            "scrub now (and repairs what it finds from healthy replicas); a stopped node's "
            "data directory is checked read-only."
        ),
    )
    p.add_argument("--data-dir", type=Path, required=True, help="the node's data_dir")
    p.add_argument(
        "--timeout-s",
        type=float,
        default=3600.0,
        help="running node: how long to wait for the pass to finish (default %(default)s)",
    )
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    data_dir: Path = args.data_dir
    if not data_dir.is_dir():
        print(f"error: {data_dir} is not a directory", file=sys.stderr)
        return EXIT_FAILED
    try:
        pid = _running_node(data_dir)
        if pid is None:
            result = _scrub_offline(data_dir)
        else:
            result = _scrub_running(data_dir, pid, args.timeout_s)
    except (OSError, TimeoutError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    _print(result, args.json)
    return EXIT_FAILED if result["damaged"] else EXIT_OK


def _running_node(data_dir: Path) -> int | None:
    """The pid of the node holding the data directory's lock, or None if none does."""
    lock = data_dir / LOCK_FILE
    if not lock.exists():
        return None
    fd = os.open(lock, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
            if not text.isdigit():
                raise ValueError(
                    f"{lock} is locked by a node that did not record its pid"
                ) from None
            return int(text)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _scrub_offline(data_dir: Path) -> dict[str, Any]:
    partitions, damaged, torn = 0, [], []
    segments = checked = 0
    for directory in partition_dirs(data_dir):
        report = scrub_partition_dir(directory)
        partitions += 1
        segments += report.segments
        checked += report.bytes_checked
        damaged += [_damage_json(report.name, d) for d in report.damage]
        if report.torn_tail is not None:
            torn.append(_damage_json(report.name, report.torn_tail))
    return {
        "node": "stopped",
        "partitions": partitions,
        "segments_checked": segments,
        "bytes_checked": checked,
        "damaged": damaged,
        "torn_tails": torn,
    }


def _damage_json(name: str, damage: Any) -> dict[str, Any]:
    return {
        "partition": name,
        "file": str(damage.segment_path),
        "position": damage.position,
        "offset": damage.offset,
        "reason": damage.reason,
    }


def _scrub_running(data_dir: Path, pid: int, timeout_s: float) -> dict[str, Any]:
    status_path = data_dir / SCRUB_STATUS_FILE
    if not status_path.exists():
        # Written once the node listens for the signal (SIGUSR1 would end it before).
        raise ValueError(f"the node (pid {pid}) is still starting: try again in a moment")
    before = _read_status(status_path).get("passes", 0)
    os.kill(pid, signal.SIGUSR1)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = _read_status(status_path)
        if status.get("passes", 0) > before:
            return {"node": f"running (pid {pid})", **status}
        time.sleep(POLL_S)
    raise TimeoutError(f"node {pid} did not finish a scrub pass within {timeout_s:g} s")


def _read_status(path: Path) -> dict[str, Any]:
    try:
        status = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return status if isinstance(status, dict) else {}


def _print(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(result))
        return
    print(
        f"node {result['node']}: {result.get('segments_checked', 0)} segments, "
        f"{result.get('bytes_checked', 0)} bytes checked, {len(result['damaged'])} damaged"
    )
    for d in result["damaged"]:
        print(
            f"DAMAGED {d['partition']}: {d['file']} position {d['position']} "
            f"(offset {d['offset']}): {d['reason']}"
        )
    for d in result.get("torn_tails", []):
        print(
            f"torn tail {d['partition']}: {d['file']} from offset {d['offset']} "
            "(a crash; the node cuts it when it starts)"
        )
