"""Producer throughput: one Producer sends N x B-byte records (default 1,000,000 x 100 B,
acks=1) as fast as it can; prints records/s, MB/s, elapsed time and the client's CPU
seconds as one JSON line.

The engine is ``rillet perf produce`` (rillet.cli.perf_command.produce_perf), so the
script and the command measure the same thing; the JSON adds parameters and machine facts.
"""

from __future__ import annotations

import sys
import time

import trio
from _common import emit, ensure_topic, parser, target

from rillet.cli.perf_command import COMPRESSIONS, ProducePerfSpec, produce_perf
from rillet.client.producer import DEFAULT_BATCH_BYTES


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--num-records", type=int, default=1_000_000)
    p.add_argument("--record-size", type=int, default=100)
    p.add_argument("--acks", default="1", choices=["all", "-1", "0", "1"])
    p.add_argument("--batch-bytes", type=int, default=DEFAULT_BATCH_BYTES)
    p.add_argument("--linger-ms", type=int, default=5)
    p.add_argument("--compression", default="none", choices=COMPRESSIONS)
    p.add_argument("--partitions", type=int, default=1)
    p.add_argument("--topic", help="default: a new topic per run")
    args = p.parse_args()
    spec = ProducePerfSpec(
        topic=args.topic or f"bench-produce-{time.time_ns()}",
        num_records=args.num_records,
        record_size=args.record_size,
        acks=args.acks,
        batch_bytes=args.batch_bytes,
        linger_ms=args.linger_ms,
        compression=args.compression,
    )

    async def run(bootstrap: str) -> None:
        await ensure_topic(bootstrap, spec.topic, args.partitions, args.replication_factor)
        cpu_before_s = time.process_time()
        result = await produce_perf(bootstrap, spec, progress=sys.stderr)
        cpu_s = time.process_time() - cpu_before_s
        emit(
            "produce_throughput",
            {**vars(args), "topic": spec.topic, "bootstrap": bootstrap},
            {
                "records": spec.num_records,
                "records_per_s": result["records_per_s"],
                "mb_per_s": result["mb_per_s"],
                "elapsed_s": result["elapsed_s"],
                "send_to_ack_latency_ms": result["latency_ms"],
                # this process's CPU time while producing: steadier than wall-clock
                # throughput on a shared machine
                "client_cpu_s": round(cpu_s, 3),
            },
        )

    with target(args.bootstrap, args.nodes) as bootstrap:
        trio.run(run, bootstrap)


if __name__ == "__main__":
    main()
