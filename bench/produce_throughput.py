"""One producer, N x B-byte records, acks=1 by default: records/s and MB/s as one JSON line."""

from __future__ import annotations

import time

import trio
from _common import emit, parser, target

from rillet.broker.cli.perf_command import produce_perf
from rillet.client import Admin, NewTopic


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--num-records", type=int, default=1_000_000)
    p.add_argument("--record-size", type=int, default=100)
    p.add_argument("--acks", default="1")
    p.add_argument("--batch-bytes", type=int, default=256 * 1024)
    p.add_argument("--linger-ms", type=int, default=5)
    args = p.parse_args()
    topic = f"bench-produce-{time.time_ns()}"

    async def run(bootstrap: str) -> None:
        async with Admin(bootstrap) as admin:
            await admin.create_topics([NewTopic(topic, 1)])
        emit(
            await produce_perf(
                bootstrap,
                topic,
                args.num_records,
                args.record_size,
                args.acks,
                args.batch_bytes,
                args.linger_ms,
                -1,
                100,
                progress=False,
            )
        )

    with target(args.bootstrap) as bootstrap:
        trio.run(run, bootstrap)


if __name__ == "__main__":
    main()
