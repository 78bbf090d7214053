"""Consumer throughput: read N records (default 1,000,000 x 100 B) from the beginning of a
topic; prints records/s and MB/s (and the client's CPU seconds) as one JSON line.

The records are produced first (acks=1, not timed) into a new topic, or ``--topic`` reuses
an existing topic that already holds at least N records (nothing is produced then).
"""

from __future__ import annotations

import time

import trio
from _common import emit, ensure_topic, parser, target

from rillet.cli.perf_command import (
    ConsumePerfSpec,
    ProducePerfSpec,
    consume_perf,
    produce_perf,
)
from rillet.client import Admin, Consumer, TopicPartition


async def records_in(bootstrap: str, topic: str) -> int:
    """How many records the topic holds (sum over partitions of end - start)."""
    async with Admin(bootstrap) as admin:
        (description,) = await admin.describe_topics([topic])
    tps = [TopicPartition(topic, p.partition) for p in description.partitions]
    async with Consumer(bootstrap) as consumer:
        starts = await consumer.beginning_offsets(tps)
        ends = await consumer.end_offsets(tps)
    return sum(ends[tp] - starts[tp] for tp in tps)


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--num-records", type=int, default=1_000_000)
    p.add_argument("--record-size", type=int, default=100)
    p.add_argument("--partitions", type=int, default=1)
    p.add_argument("--fetch-max-wait-ms", type=int, default=500)
    p.add_argument("--max-partition-fetch-bytes", type=int, default=1 << 20)
    p.add_argument("--topic", help="reuse this topic if it holds enough records")
    args = p.parse_args()
    topic = args.topic or f"bench-consume-{time.time_ns()}"

    async def run(bootstrap: str) -> None:
        await ensure_topic(bootstrap, topic, args.partitions, args.replication_factor)
        held = await records_in(bootstrap, topic)
        produced = 0
        if held < args.num_records:
            produced = args.num_records - held
            await produce_perf(
                bootstrap, ProducePerfSpec(topic, produced, args.record_size, acks="1")
            )
        cpu_before_s = time.process_time()
        result = await consume_perf(
            bootstrap,
            ConsumePerfSpec(
                topic,
                args.num_records,
                fetch_max_wait_ms=args.fetch_max_wait_ms,
                max_partition_fetch_bytes=args.max_partition_fetch_bytes,
            ),
        )
        emit(
            "consume_throughput",
            {**vars(args), "topic": topic, "produced_first": produced, "bootstrap": bootstrap},
            {
                "records": result["records"],
                "complete": result["complete"],
                "records_per_s": result["records_per_s"],
                "mb_per_s": result["mb_per_s"],
                "elapsed_s": result["elapsed_s"],
                # this process's CPU time while consuming: steadier than wall-clock
                # throughput on a shared machine
                "client_cpu_s": round(time.process_time() - cpu_before_s, 3),
            },
        )

    with target(args.bootstrap, args.nodes) as bootstrap:
        trio.run(run, bootstrap)


if __name__ == "__main__":
    main()
