"""``rillet demo``: a first-run check that the whole data path works, end to end.

Unless ``--bootstrap`` names a running cluster, it starts a 3-node cluster of its own
(local_cluster.py: three Raft voters that are also brokers, always stopped on exit; with
``--secure``, made as ``cluster up --secure`` makes one, and the demo runs over TLS). Then it
creates topic ``demo`` (3 partitions, spread over the brokers) if missing, produces 1,000
keyed records with acks=all, reads the topic back from the beginning and checks what a Kafka
user relies on: every acknowledged record is there, each partition returns its records in
the order they were acknowledged, byte for byte, and each key stays on one partition.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import trio

from rillet.cli.common import (
    add_tls_options,
    bootstrap_arg,
    client_options,
    positive_int,
    run_async,
)
from rillet.cli.secure_cluster import (
    plan_local_cluster,
    plan_ssl_context,
)
from rillet.client import (
    Admin,
    Consumer,
    ConsumerRecord,
    NewTopic,
    Producer,
    RecordMetadata,
    TopicPartition,
)
from rillet.client.errors import TopicAlreadyExistsError
from rillet.launcher.local_cluster import LocalCluster
from rillet.launcher.local_node import NodeStartError

TOPIC = "demo"
PARTITIONS = 3
RECORDS = 1000
KEYS = 37
CONSUME_TIMEOUT_S = 30.0
POLL_MS = 500


def register(sub: Any) -> None:
    p = sub.add_parser(
        "demo", help="start a local 3-node cluster and check a produce/consume round trip"
    )
    p.add_argument(
        "--bootstrap",
        type=bootstrap_arg,
        help="use this running cluster (default: start a cluster of its own, then stop it)",
    )
    p.add_argument(
        "--data-dir",
        type=Path,
        help="directory of the cluster the demo starts (default: temporary)",
    )
    p.add_argument("--nodes", type=positive_int, default=3, help="nodes to start (default 3)")
    p.add_argument("--records", type=positive_int, default=RECORDS, help=f"default {RECORDS}")
    p.add_argument(
        "--secure",
        action="store_true",
        help="start the cluster as `cluster up --secure` does (TLS, mutual TLS, SASL)",
    )
    add_tls_options(p)  # with --bootstrap: the cluster's TLS files
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    out = sys.stdout
    if args.bootstrap is not None:
        return run_async(lambda: demo(args.bootstrap, args.records, out, client_options(args)))
    secure = " secure (TLS on every link, mutual TLS, SASL)" if args.secure else ""
    print(f"starting a local{secure} {args.nodes}-node cluster ...", file=out, flush=True)
    with contextlib.ExitStack() as stack:
        if args.data_dir is None:
            base = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="rillet-demo-")))
        else:
            base = args.data_dir
        try:
            plan = plan_local_cluster(base, args.nodes, args.secure)
            cluster = stack.enter_context(LocalCluster(plan))
            started = time.monotonic()
            cluster.start()
        except NodeStartError as exc:
            print(f"error: could not start the cluster: {exc}", file=sys.stderr)
            return 1
        context = plan_ssl_context(plan)
        options: dict[str, Any] = {} if context is None else {"ssl_context": context}
        print(
            f"{args.nodes} nodes ready in {time.monotonic() - started:.1f}s "
            f"(Raft quorum elected, brokers registered): {cluster.bootstrap}",
            file=out,
            flush=True,
        )
        code = run_async(lambda: demo(cluster.bootstrap, args.records, out, options))
        print("stopping the cluster", file=out, flush=True)
        cluster.stop_all()
        return code


@dataclass
class RoundTrip:
    """What was acknowledged and what was read back, per partition, in offset order."""

    start: dict[int, int]  # end offset of each partition before this run produced
    acked: dict[int, list[tuple[int, bytes, bytes]]] = field(
        default_factory=lambda: defaultdict(list)
    )  # partition -> [(offset, key, value)]
    read: dict[int, list[ConsumerRecord]] = field(default_factory=lambda: defaultdict(list))

    def problems(self) -> list[str]:
        """Empty when every partition read back exactly what it acknowledged, in order."""
        out = []
        key_home: dict[bytes, int] = {}
        for p, sent in sorted(self.acked.items()):
            for _, key, _ in sent:
                if key_home.setdefault(key, p) != p:
                    out.append(f"key {key!r} went to partitions {key_home[key]} and {p}")
        for p in sorted(self.start):
            got = [(r.offset, r.key, r.value) for r in self.read[p] if r.offset >= self.start[p]]
            want = sorted(self.acked.get(p, []))
            if len(got) != len(want):
                out.append(f"partition {p}: read {len(got)} records, acknowledged {len(want)}")
            elif got != want:
                first = next(w[0] for g, w in zip(got, want, strict=True) if g != w)
                out.append(f"partition {p}: records differ from the acknowledged ones at {first}")
            offsets = [r.offset for r in self.read[p]]
            if offsets != sorted(set(offsets)):
                out.append(f"partition {p}: offsets out of order or repeated")
        return out


async def demo(
    bootstrap: str, records: int, out: TextIO, options: dict[str, Any] | None = None
) -> int:
    """``options``: more client settings (``ssl_context`` for a TLS cluster)."""
    options = options or {}
    partitions = await ensure_topic(bootstrap, out, options)
    tps = [TopicPartition(TOPIC, p) for p in partitions]
    async with Consumer(bootstrap, **options) as consumer:
        before = await consumer.end_offsets(tps)
    trip = RoundTrip({tp.partition: before[tp] for tp in tps})

    started = time.perf_counter()
    for md, key, value in await produce_keyed(bootstrap, records, options):
        trip.acked[md.partition].append((md.offset, key, value))
    produce_s = time.perf_counter() - started
    print(
        f"produced {records} keyed records with acks=all in {produce_s * 1000:.0f} ms "
        f"({records / produce_s:,.0f} records/s)",
        file=out,
    )

    async with Consumer(bootstrap, **options) as consumer:
        ends = await consumer.end_offsets(tps)
        started = time.perf_counter()
        complete = await read_until(consumer, tps, ends, trip)
        consume_s = time.perf_counter() - started
    total = sum(len(v) for v in trip.read.values())
    print(
        f"consumed {total} records from the beginning in {consume_s * 1000:.0f} ms "
        f"({total / consume_s:,.0f} records/s)",
        file=out,
    )
    for tp in tps:
        got = trip.read[tp.partition]
        span = f"offsets {got[0].offset}..{got[-1].offset}" if got else "empty"
        fresh = len(trip.acked.get(tp.partition, []))
        print(f"  partition {tp.partition}: {span}, {fresh} records from this run", file=out)
    problems = trip.problems()
    if not complete:
        problems.insert(0, f"timed out after {CONSUME_TIMEOUT_S:g}s before reaching the end")
    if problems:
        for problem in problems:
            print(f"  FAILED: {problem}", file=sys.stderr)
        print("demo FAILED", file=sys.stderr)
        return 1
    print("every record read back, in order per partition, byte-identical: demo OK", file=out)
    return 0


async def ensure_topic(bootstrap: str, out: TextIO, options: dict[str, Any]) -> list[int]:
    """Create ``demo`` unless it exists; its partition ids either way."""
    async with Admin(bootstrap, **options) as admin:
        try:
            await admin.create_topics([NewTopic(TOPIC, PARTITIONS)])
            print(f"created topic {TOPIC} with {PARTITIONS} partitions", file=out)
        except TopicAlreadyExistsError:
            print(f"topic {TOPIC} exists already: adding to it", file=out)
        (description,) = await admin.describe_topics([TOPIC])
    return [p.partition for p in description.partitions]


async def produce_keyed(
    bootstrap: str, records: int, options: dict[str, Any]
) -> list[tuple[RecordMetadata, bytes, bytes]]:
    """Send ``records`` keyed records (acks=all) and return each one's acknowledgement."""
    pending = []
    async with Producer(bootstrap, acks="all", **options) as producer:
        for i in range(records):
            key = f"user-{i % KEYS}".encode()
            value = f"event-{i}".encode()
            pending.append((await producer.send(TOPIC, value, key=key), key, value))
        return [(await future, key, value) for future, key, value in pending]


async def read_until(
    consumer: Consumer,
    tps: list[TopicPartition],
    ends: dict[TopicPartition, int],
    trip: RoundTrip,
) -> bool:
    """Read every partition from its beginning up to ``ends``; False on timeout."""
    consumer.assign(tps)
    await consumer.seek_to_beginning(*tps)
    beginnings = await consumer.beginning_offsets(tps)
    positions = {tp: beginnings[tp] - 1 for tp in tps}  # offset of the last record read
    with trio.move_on_after(CONSUME_TIMEOUT_S):
        while any(positions[tp] + 1 < ends[tp] for tp in tps):  # bounded by the timeout
            for r in await consumer.poll(timeout_ms=POLL_MS):
                trip.read[r.partition].append(r)
                positions[TopicPartition(r.topic, r.partition)] = r.offset
        return True
    return False
