"""Log compaction: how fast the cleaner cleans, and what it costs producers meanwhile.

Two parts, one JSON line, each part run for every cleaner worker in ``--workers``
(``[tasks] log_cleaner_worker``: ``process``, the node's default, and ``thread``):

- ``clean``: in this process, a compacted partition log in a temporary directory is filled
  with ``--dirty-mb`` of overwrites (``--keys`` distinct keys, ``--value-bytes`` values,
  ``--batch-records`` per batch, 64 MiB segments; fixed-width keys ``key-00000042``, whose
  records the C decoder reads: keys of varying lengths take the general Python decoder,
  about 2x slower), then a copy of it per worker is cleaned once (key map, rewrite, swap):
  ``thread`` as ``clean_now`` does on this thread, ``process`` in a child process at
  ``--niceness``, as the node's cleaner does by default. Reported: MB/s of dirty log cleaned
  (the cleanable bytes before / wall time), the bytes before and after.
- ``produce``: per worker a local node (``[tasks] log_cleaner_backoff_ms = 100``); one
  producer sends one acks=all record at a time for ``--seconds`` to a topic while another
  writes 1 KB overwrites at ``--fill-mb-per-s`` to a compacted topic with 4 MiB segments:
  first one whose segments stay uncleanable (``min.compaction.lag.ms`` of a day; the
  baseline: the same produce path, nothing for the cleaner to do), then one with dirty
  ratio 0.1 (a clean about every segment, so the cleaner works throughout). Reported per
  phase: the latency summary, the CPU seconds of the node and of its cleaner children, and
  the MB/s the cleaner read (``rillet_log_cleaner_bytes_cleaned``); the p99 rise, and the
  bytes the cleaned topic still holds at the end.

The load average is reported at the start and end of each part (other work on the
machine moves the baseline itself). The goals (issue 39): at least 50 MB/s
cleaned, and p99 no more than 20 % higher with the cleaner running. Run (about 2 minutes):
``nice -n 5 .venv/bin/python bench/compaction.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio
from _common import emit, process_cpu_s

from rillet.broker.replica.clean_process import clean_now_in_process
from rillet.cli.perf_command import latency_summary
from rillet.client import Admin, NewTopic, Producer
from rillet.launcher.local_node import running_node
from rillet.partition_store.cleaning_pass import clean_now
from rillet.partition_store.config import LogConfig
from rillet.partition_store.log import PartitionLog
from rillet.wire.batch import build_batch

MB = 1_000_000
T0 = 1_700_000_000_000
WORKERS = ("process", "thread")


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


@contextmanager
def loaded(part: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Records the load average at the start and end of a part."""
    part["load_average_start"] = load_average()
    yield part
    part["load_average_end"] = load_average()


def fill(directory: Path, args: argparse.Namespace) -> int:
    """A closed compacted log of ``--dirty-mb`` of overwrites; the records written."""
    config = LogConfig(segment_bytes=64 << 20, cleanup_policy="compact", retention_ms=-1)
    value = b"v" * args.value_bytes
    log = PartitionLog.open(directory, config, T0, "t", 0)
    i = 0
    while log.size_bytes < args.dirty_mb * MB:
        records = [
            (T0 + i + n, f"key-{(i + n) % args.keys:08d}".encode(), value, None)
            for n in range(args.batch_records)
        ]
        log.append_as_leader(build_batch(records), 0, T0)
        i += args.batch_records
    log.roll(T0)
    log.close()
    return i


def clean_throughput(args: argparse.Namespace) -> dict[str, Any]:
    config = LogConfig(segment_bytes=64 << 20, cleanup_policy="compact", retention_ms=-1)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="rillet-bench-") as tmp:
        source = Path(tmp) / "filled" / "t-0"
        out["records"] = fill(source, args)
        for worker in args.workers:
            directory = Path(tmp) / worker / "t-0"
            shutil.copytree(source, directory)
            log = PartitionLog.open(directory, config, T0, "t", 0)
            with loaded({}) as part:
                before = log.size_bytes
                started = time.perf_counter()
                if worker == "thread":
                    result = clean_now(log, T0 + 10**6)
                else:
                    result = trio.run(clean_now_in_process, log, T0 + 10**6, -1, args.niceness)
                seconds = time.perf_counter() - started
            assert result is not None
            part.update(
                log_bytes_before=before,
                log_bytes_after=log.size_bytes,
                seconds=round(seconds, 3),
                dirty_mb_per_s=round(before / MB / seconds, 1),
                records_dropped=result.stats.records_dropped,
                map_s=round(result.durations_s["map"], 3),
                write_s=round(result.durations_s["write"], 3),
            )
            log.close()
            shutil.rmtree(directory)
            out[worker] = part
            print(f"clean, {worker}: {part}", file=sys.stderr)
    return out


async def send_loop(bootstrap: str, topic: str, seconds: float, keys: int) -> list[float]:
    latencies: list[float] = []
    async with Producer(bootstrap, acks="all", linger_ms=0) as producer:
        deadline = time.perf_counter() + seconds
        i = 0
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            await (await producer.send(topic, b"x" * 100, key=f"k{i % keys}".encode()))
            latencies.append((time.perf_counter() - started) * 1000)
            i += 1
    return latencies


async def overwrite(bootstrap: str, topic: str, mb_per_s: float, seconds: float, keys: int) -> int:
    """Overwrites of ``keys`` keys (1 KB values) at ``mb_per_s`` for ``seconds``; bytes sent."""
    value = b"f" * 1000
    chunk = 100  # records per step
    sent = 0
    async with Producer(bootstrap, acks=1, linger_ms=5) as producer:
        started = time.perf_counter()
        while (elapsed := time.perf_counter() - started) < seconds:
            ahead = sent / (mb_per_s * MB) - elapsed
            if ahead > 0:
                await trio.sleep(ahead)
            futures = [
                await producer.send(topic, value, key=f"k{(sent // 1000 + n) % keys}".encode())
                for n in range(chunk)
            ]
            for future in futures:
                await future
            sent += chunk * len(value)
    return sent


def log_bytes(partition_dir: Path) -> int:
    return sum(p.stat().st_size for p in partition_dir.glob("*.log"))


@dataclass(frozen=True, slots=True)
class NodeProbe:
    """Where to read the node's CPU time and its cleaner's counter."""

    pid: int
    metrics_url: str

    def sample(self) -> tuple[float, float, float]:
        """CPU seconds of the node itself and of its children that have exited (cleaner
        processes: ``/proc/<pid>/stat``'s cutime+cstime), and the bytes its cleaner read."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        children = (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")
        with urllib.request.urlopen(self.metrics_url, timeout=10) as answer:
            text = answer.read().decode()
        cleaned = next(
            float(line.split()[-1])
            for line in text.splitlines()
            if line.startswith("rillet_log_cleaner_bytes_cleaned_total ")
        )
        return process_cpu_s(self.pid), children, cleaned


async def measured(
    bootstrap: str, bulk_topic: str, args: argparse.Namespace, probe: NodeProbe
) -> dict[str, Any]:
    """Latencies of single acks=all sends to ``plain`` while ``bulk_topic`` takes paced
    overwrites; the bytes of those, the CPU the node and its cleaner children used meanwhile,
    and the MB/s the cleaner read."""
    before = probe.sample()
    started = time.perf_counter()
    async with trio.open_nursery() as nursery:
        sent: list[int] = []

        async def bulk() -> None:
            sent.append(
                await overwrite(bootstrap, bulk_topic, args.fill_mb_per_s, args.seconds, args.keys)
            )

        nursery.start_soon(bulk)
        latencies = await send_loop(bootstrap, "plain", args.seconds, args.keys)
    seconds = time.perf_counter() - started
    node_cpu, children_cpu, cleaned = (b - a for a, b in zip(before, probe.sample(), strict=True))
    return {
        "latency_ms": latency_summary(latencies),
        "bulk_bytes_written": sent[0],
        "node_cpu_s": round(node_cpu, 2),
        "cleaner_children_cpu_s": round(children_cpu, 2),
        "cleaner_read_mb_per_s": round(cleaned / MB / seconds, 2),
    }


async def produce_latency(
    bootstrap: str, args: argparse.Namespace, data_dir: Path, probe: NodeProbe
) -> dict[str, Any]:
    """The same compacted load twice: to a topic whose segments stay uncleanable
    (``min.compaction.lag.ms`` of a day: the cleaner has nothing to do), then to one the
    cleaner cleans about every segment (dirty ratio 0.1)."""
    compact = {"cleanup.policy": "compact", "segment.bytes": str(4 << 20)}
    async with Admin(bootstrap) as admin:
        await admin.create_topics(
            [
                NewTopic("plain", 1),
                NewTopic("held", 1, configs={**compact, "min.compaction.lag.ms": "86400000"}),
                NewTopic("table", 1, configs={**compact, "min.cleanable.dirty.ratio": "0.1"}),
            ]
        )
    baseline = await measured(bootstrap, "held", args, probe)
    print("baseline done; now with the cleaner", file=sys.stderr)
    cleaning = await measured(bootstrap, "table", args, probe)
    base, with_cleaner = baseline["latency_ms"]["p99"], cleaning["latency_ms"]["p99"]
    rise = None
    if base and with_cleaner:
        rise = round((float(with_cleaner) / float(base) - 1) * 100, 1)
    return {
        "baseline": baseline,
        "with_cleaner": cleaning,
        "p99_rise_percent": rise,
        # The compacted topic holds this much at the end (it took
        # with_cleaner.bulk_bytes_written; the held topic keeps all it took).
        "table_log_bytes_at_end": log_bytes(data_dir / "table-0"),
    }


def produce_per_worker(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for worker in args.workers:
        os.sync()  # the clean part's (or the previous node's) writeback would skew this one
        config = (
            "[http]\nenabled = true\nport = 0\n"
            "[tasks]\nlog_cleaner_backoff_ms = 100\n"
            f"log_cleaner_io_max_bytes_per_second = {args.cleaner_io_limit}\n"
            f'log_cleaner_worker = "{worker}"\n'
            f"log_cleaner_process_niceness = {args.niceness}\n"
        )
        with tempfile.TemporaryDirectory(prefix="rillet-bench-") as tmp:
            data_dir = Path(tmp) / "data"
            with running_node(data_dir, config) as node, loaded({}) as part:
                ready = json.loads((node.log_path.parent / "ready.json").read_text())
                url = f"http://127.0.0.1:{ready['http_port']}/metrics"
                probe = NodeProbe(node.proc.pid, url)
                part.update(trio.run(produce_latency, node.bootstrap, args, data_dir, probe))
        out[worker] = part
        print(f"produce, {worker}: p99 rise {part['p99_rise_percent']}%", file=sys.stderr)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dirty-mb", type=int, default=256)
    p.add_argument("--keys", type=int, default=10_000)
    p.add_argument("--value-bytes", type=int, default=1000)
    p.add_argument("--batch-records", type=int, default=100)
    p.add_argument("--fill-mb-per-s", type=float, default=4.0)
    p.add_argument("--seconds", type=float, default=15)
    p.add_argument(
        "--workers",
        type=lambda text: [w for w in text.split(",") if w],
        default=list(WORKERS),
        help="comma-separated cleaner workers to measure: process, thread (default both)",
    )
    p.add_argument(
        "--niceness",
        type=int,
        default=10,
        help="[tasks] log_cleaner_process_niceness of the process worker (default 10)",
    )
    p.add_argument(
        "--cleaner-io-limit",
        type=int,
        default=-1,
        help="the node's [tasks] log_cleaner_io_max_bytes_per_second (-1: unlimited)",
    )
    args = p.parse_args()
    if not args.workers or set(args.workers) - set(WORKERS):
        p.error(f"--workers: a comma-separated list of {', '.join(WORKERS)}")
    clean = clean_throughput(args)
    produce = produce_per_worker(args)
    emit("compaction", vars(args), {"clean": clean, "produce": produce})


if __name__ == "__main__":
    main()
