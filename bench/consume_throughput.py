"""Produce N records, then consume them from the beginning: records/s as one JSON line."""

from __future__ import annotations

import time

import trio
from _common import emit, parser, target

from rillet.broker.cli.perf_command import consume_perf, produce_perf
from rillet.client import Admin, NewTopic


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--num-records", type=int, default=1_000_000)
    p.add_argument("--record-size", type=int, default=100)
    args = p.parse_args()
    topic = f"bench-consume-{time.time_ns()}"

    async def run(bootstrap: str) -> None:
        async with Admin(bootstrap) as admin:
            await admin.create_topics([NewTopic(topic, 1)])
        await produce_perf(
            bootstrap,
            topic,
            args.num_records,
            args.record_size,
            "1",
            256 * 1024,
            5,
            -1,
            1000,
            progress=False,
        )
        result = await consume_perf(bootstrap, topic, args.num_records)
        emit({**result, "record_size": args.record_size})

    with target(args.bootstrap) as bootstrap:
        trio.run(run, bootstrap)


if __name__ == "__main__":
    main()
