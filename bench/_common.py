"""Shared plumbing of the bench scripts: a node to run against and the JSON line they print.

Every script prints exactly one JSON line on stdout (progress, if any, goes to stderr), with
its figures, its parameters, the git revision of the checkout and what the machine is, so a
result can be compared with another one later without guessing how it was obtained.
Without ``--bootstrap`` a script starts a node of its own (the same code as ``rillet demo``,
rillet.launcher.local_node) in a temporary directory, and always stops it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rillet.cli.common import bootstrap_arg
from rillet.client import Admin, NewTopic
from rillet.client.errors import TopicAlreadyExistsError
from rillet.launcher.local_cluster import LocalCluster, plan_cluster
from rillet.launcher.local_node import local_node

REPO = Path(__file__).resolve().parent.parent


def own_cpu_s() -> float:
    """CPU time (user + system) this process has used so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def process_cpu_s(pid: int) -> float:
    """CPU time (user + system) process ``pid`` has used so far (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument(
        "--bootstrap",
        type=bootstrap_arg,
        help="host:port of a running node (default: start a local node for this run)",
    )
    p.add_argument(
        "--nodes",
        type=int,
        default=1,
        help="without --bootstrap: start a local cluster of this many voters (default 1)",
    )
    p.add_argument("--replication-factor", type=int, default=1, help="of the topic it creates")
    return p


@contextlib.contextmanager
def target(bootstrap: str | None, nodes: int = 1) -> Iterator[str]:
    """The given cluster, or a node (or cluster) started for this run (stopped on exit)."""
    if bootstrap:
        yield bootstrap
        return
    if nodes > 1:
        with contextlib.ExitStack() as stack:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="rillet-bench-"))
            cluster = stack.enter_context(
                LocalCluster(plan_cluster(Path(tmp), nodes), log_level="WARNING")
            )
            cluster.start()
            print(f"started a local {nodes}-node cluster at {cluster.bootstrap}", file=sys.stderr)
            yield cluster.bootstrap
        return
    with local_node() as started:
        print(f"started a local node at {started}", file=sys.stderr)
        yield started


async def ensure_topic(
    bootstrap: str,
    topic: str,
    partitions: int,
    replication_factor: int = 1,
    options: dict[str, Any] | None = None,
) -> bool:
    """Create ``topic`` unless it exists; True if it was created now. ``options``: more
    client settings (``ssl_context``)."""
    async with Admin(bootstrap, **(options or {})) as admin:
        try:
            await admin.create_topics([NewTopic(topic, partitions, replication_factor)])
        except TopicAlreadyExistsError:
            return False
    return True


def git_rev(repo: Path = REPO) -> str | None:
    """The checked-out commit, read from .git without running git (None when unknown)."""
    try:
        git = _git_dir(repo)
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head[:12] or None
        ref = head.removeprefix("ref: ")
        common = git
        if (git / "commondir").exists():  # a linked worktree keeps its refs in the main one
            common = (git / (git / "commondir").read_text().strip()).resolve()
        for base in (git, common):
            if (base / ref).exists():
                return (base / ref).read_text().strip()[:12]
        for line in (common / "packed-refs").read_text().splitlines():
            sha, _, name = line.partition(" ")
            if name == ref:
                return sha[:12]
    except OSError:
        pass
    return None


def _git_dir(repo: Path) -> Path:
    git = repo / ".git"
    if git.is_file():  # "gitdir: <path>" in worktrees and submodules
        return (repo / git.read_text().strip().removeprefix("gitdir: ")).resolve()
    return git


def machine() -> dict[str, Any]:
    """What the figures depend on: cores, CPU model, memory, OS and Python."""
    info: dict[str, Any] = {
        "nproc": os.cpu_count(),
        "machine": platform.machine(),
        "system": f"{platform.system()} {platform.release()}",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
    }
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.partition(":")[2].strip()
                break
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                info["mem_gib"] = round(int(line.split()[1]) / 2**20, 1)
                break
    with contextlib.suppress(OSError):
        info["loadavg_1m"] = os.getloadavg()[0]  # a busy machine explains a bad run
    return info


def emit(bench: str, params: dict[str, Any], result: dict[str, Any]) -> None:
    """Print the one JSON line: bench name, figures, parameters, revision and machine."""
    line = {
        "bench": bench,
        **result,
        "params": params,
        "git_rev": git_rev(),
        "host": machine(),
    }
    print(json.dumps(line), flush=True)
