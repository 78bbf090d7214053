"""Log compaction: how fast the cleaner cleans, and what it costs producers meanwhile.

Two parts, one JSON line:

- ``clean``: in this process, a compacted partition log in a temporary directory is filled
  with ``--dirty-mb`` of overwrites (``--keys`` distinct keys, ``--value-bytes`` values,
  ``--batch-records`` per batch, 64 MiB segments; fixed-width keys ``key-00000042``, whose
  records the C decoder reads: keys of varying lengths take the general Python decoder,
  about 2x slower), then cleaned once (``clean_now``: key
  map, rewrite, swap, as the node's cleaner does in its worker thread). Reported: MB/s of
  dirty log cleaned (the cleanable bytes before / wall time), the bytes before and after.
- ``produce``: a local node (``[tasks] log_cleaner_backoff_ms = 100``); one producer sends
  one acks=all record at a time for ``--seconds`` to a topic while another writes 1 KB
  overwrites at ``--fill-mb-per-s`` to a second topic with 4 MiB segments: a ``delete``
  topic (baseline: the same load, nothing to clean), then a compacted one (dirty ratio 0.1:
  a clean about every segment, so the cleaner works throughout). Reported: both latency
  summaries, the p99 rise, and the bytes the compacted topic took and still holds.

The goals (issue 39): at least 50 MB/s cleaned, and p99 no more than 20 % higher with the
cleaner running. Run: ``.venv/bin/python bench/compaction.py`` (about a minute).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio
from _common import emit

from rillet.cli.perf_command import latency_summary
from rillet.client import Admin, NewTopic, Producer
from rillet.launcher.local_node import local_node
from rillet.partition_store.cleaning_pass import clean_now
from rillet.partition_store.config import LogConfig
from rillet.partition_store.log import PartitionLog
from rillet.wire.batch import build_batch

MB = 1_000_000
T0 = 1_700_000_000_000


def clean_throughput(args: argparse.Namespace) -> dict[str, Any]:
    config = LogConfig(segment_bytes=64 << 20, cleanup_policy="compact", retention_ms=-1)
    value = b"v" * args.value_bytes
    with tempfile.TemporaryDirectory(prefix="rillet-bench-") as tmp:
        log = PartitionLog.open(Path(tmp) / "t-0", config, T0, "t", 0)
        i = 0
        while log.size_bytes < args.dirty_mb * MB:
            records = [
                (T0 + i + n, f"key-{(i + n) % args.keys:08d}".encode(), value, None)
                for n in range(args.batch_records)
            ]
            log.append_as_leader(build_batch(records), 0, T0)
            i += args.batch_records
        log.roll(T0)
        before = log.size_bytes
        started = time.perf_counter()
        result = clean_now(log, T0 + 10**6)
        seconds = time.perf_counter() - started
        after = log.size_bytes
        log.close()
    assert result is not None
    return {
        "records": i,
        "log_bytes_before": before,
        "log_bytes_after": after,
        "seconds": round(seconds, 3),
        "dirty_mb_per_s": round(before / MB / seconds, 1),
        "records_dropped": result.stats.records_dropped,
        "map_s": round(result.durations_s["map"], 3),
        "write_s": round(result.durations_s["write"], 3),
    }


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


async def measured(
    bootstrap: str, topic: str, bulk_topic: str, args: argparse.Namespace
) -> tuple[list[float], int]:
    """Latencies of single acks=all sends to ``topic`` while ``bulk_topic`` takes paced
    overwrites; and the bytes of those."""
    async with trio.open_nursery() as nursery:
        result: list[int] = []

        async def bulk() -> None:
            result.append(
                await overwrite(bootstrap, bulk_topic, args.fill_mb_per_s, args.seconds, args.keys)
            )

        nursery.start_soon(bulk)
        latencies = await send_loop(bootstrap, topic, args.seconds, args.keys)
    return latencies, result[0]


async def produce_latency(
    bootstrap: str, args: argparse.Namespace, data_dir: Path
) -> dict[str, Any]:
    compact = {
        "cleanup.policy": "compact",
        "segment.bytes": str(4 << 20),
        "min.cleanable.dirty.ratio": "0.1",
    }
    async with Admin(bootstrap) as admin:
        await admin.create_topics(
            [
                NewTopic("plain", 1),
                NewTopic("bulk", 1, configs={"segment.bytes": str(4 << 20)}),
                NewTopic("table", 1, configs=compact),
            ]
        )
    baseline, _ = await measured(bootstrap, "plain", "bulk", args)
    print("baseline done; now with the cleaner", file=sys.stderr)
    cleaning, written = await measured(bootstrap, "plain", "table", args)
    kept = log_bytes(data_dir / "table-0")
    base, with_cleaner = latency_summary(baseline), latency_summary(cleaning)
    rise = None
    if base["p99"] and with_cleaner["p99"]:
        rise = round((float(with_cleaner["p99"]) / float(base["p99"]) - 1) * 100, 1)
    return {
        "baseline_ms": base,
        "with_cleaner_ms": with_cleaner,
        "p99_rise_percent": rise,
        # What the cleaner did meanwhile: the compacted topic took this many bytes and holds
        # this many at the end (a delete topic would hold them all).
        "table_bytes_written": written,
        "table_log_bytes_at_end": kept,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dirty-mb", type=int, default=256)
    p.add_argument("--keys", type=int, default=10_000)
    p.add_argument("--value-bytes", type=int, default=1000)
    p.add_argument("--batch-records", type=int, default=100)
    p.add_argument("--fill-mb-per-s", type=float, default=4.0)
    p.add_argument("--seconds", type=float, default=15)
    p.add_argument(
        "--cleaner-io-limit",
        type=int,
        default=-1,
        help="the node's [tasks] log_cleaner_io_max_bytes_per_second (-1: unlimited)",
    )
    args = p.parse_args()
    clean = clean_throughput(args)
    print(f"clean: {clean}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="rillet-bench-") as tmp:
        config = (
            "[tasks]\nlog_cleaner_backoff_ms = 100\n"
            f"log_cleaner_io_max_bytes_per_second = {args.cleaner_io_limit}\n"
        )
        data_dir = Path(tmp) / "data"
        with local_node(data_dir, config) as bootstrap:
            produce = trio.run(produce_latency, bootstrap, args, data_dir)
    emit("compaction", vars(args), {"clean": clean, "produce": produce})


if __name__ == "__main__":
    main()
