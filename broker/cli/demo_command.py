"""``rillet demo``: start a local node (unless --bootstrap is given), then prove the data path.

Creates a topic, produces 1,000 keyed records with acks=all, reads them back from the
beginning and checks that every partition returns exactly what was sent, in order.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import trio

from rillet.broker.cli.common import run_async
from rillet.broker.cli.local_node import local_node
from rillet.client import Admin, Consumer, NewTopic, Producer, TopicPartition
from rillet.client.errors import TopicAlreadyExistsError

TOPIC = "demo"
PARTITIONS = 3
RECORDS = 1000


def register(sub: Any) -> None:
    p = sub.add_parser("demo", help="start a local node and run a produce/consume round trip")
    p.add_argument("--bootstrap", help="use this running cluster instead of starting a node")
    p.add_argument("--data-dir", type=Path, help="data dir of the node the demo starts")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with contextlib.ExitStack() as stack:
        bootstrap = args.bootstrap
        if bootstrap is None:
            print("starting a local node ...", flush=True)
            bootstrap = stack.enter_context(local_node(args.data_dir))
        print(f"node at {bootstrap}", flush=True)
        return run_async(lambda: demo(bootstrap))


async def demo(bootstrap: str) -> int:
    async with Admin(bootstrap) as admin:
        with contextlib.suppress(TopicAlreadyExistsError):
            await admin.create_topics([NewTopic(TOPIC, PARTITIONS)])
    tps = [TopicPartition(TOPIC, p) for p in range(PARTITIONS)]
    async with Consumer(bootstrap) as consumer:
        start = await consumer.end_offsets(tps)

    sent: dict[int, list[bytes]] = defaultdict(list)
    started = time.perf_counter()
    async with Producer(bootstrap, acks="all") as producer:
        futures = []
        for i in range(RECORDS):
            futures.append(
                (
                    i,
                    await producer.send(
                        TOPIC, f"event-{i}".encode(), key=f"user-{i % 37}".encode()
                    ),
                )
            )
        for i, fut in futures:
            md = await fut
            sent[md.partition].append(f"event-{i}".encode())
    produce_s = time.perf_counter() - started
    print(f"produced {RECORDS} records with acks=all in {produce_s * 1000:.0f} ms")

    got: dict[int, list[bytes]] = defaultdict(list)
    started = time.perf_counter()
    async with Consumer(bootstrap, fetch_max_wait_ms=100) as consumer:
        consumer.assign(tps)
        for tp in tps:
            consumer.seek(tp, start[tp])
        with trio.fail_after(30):
            while sum(len(v) for v in got.values()) < RECORDS:
                for r in await consumer.poll(timeout_ms=500):
                    got[r.partition].append(r.value or b"")
    consume_s = time.perf_counter() - started
    print(f"consumed them back in {consume_s * 1000:.0f} ms")
    ok = True
    for p in range(PARTITIONS):
        same = got[p] == sent[p]
        ok = ok and same
        first, last = start[tps[p]], start[tps[p]] + len(got[p]) - 1
        print(
            f"  partition {p}: {len(got[p])} records, offsets {first}..{last}, "
            f"{'in order, byte-identical' if same else 'MISMATCH'}"
        )
    print("demo OK" if ok else "demo FAILED", file=sys.stdout if ok else sys.stderr)
    return 0 if ok else 1
