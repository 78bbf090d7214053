"""Micro-benchmark of ``Producer.send``: the per-record cost, without any network.

The producer is opened without its sender task or connections and told the topic's
partition count, so each ``send`` only picks a partition and encodes the record into its
partition's batch; nothing is sent. Run it directly::

    .venv/bin/python tests/unit/client/send_microbench.py [records]

It prints microseconds per record for unkeyed, explicitly placed and keyed sends, plus the
later cost of building the batches (header and CRC, paid by the sender task). The machine's
noise matters at this scale: compare runs made one after the other.
"""

from __future__ import annotations

import gc
import sys
import time
from typing import Any

import trio

from rillet.client.producer import Producer

VALUE = bytes(100)
PARTITIONS = 8


def offline_producer() -> Producer:
    """A producer that accepts sends but has no sender task and no connections."""
    producer = Producer("127.0.0.1:1", buffer_bytes=1 << 40, linger_ms=5)
    producer._lifecycle_state = "open"
    producer._counts["t"] = PARTITIONS
    producer._acc.add_topic("t", PARTITIONS)
    return producer


async def measure(records: int, chunk: int = 50_000) -> dict[str, float]:
    """Microseconds per record of each kind of send, and of building the batches.

    Records are sent in chunks; after each chunk its batches are taken away (outside the
    timed loops) and dropped one chunk later, as a running sender would recycle them. So the
    memory in use stays steady and the figures exclude the operating system's cost of
    handing a growing process fresh pages (a first, untimed chunk maps them).
    """
    out: dict[str, float] = {}
    keys = [b"user-%d" % (i % 10_000) for i in range(chunk)]
    placements: list[tuple[str, dict[str, Any]]] = [
        ("unkeyed (sticky)", {}),
        ("explicit partition", {"partition": 3}),
        ("keyed (10k distinct keys)", {}),
    ]
    build_s = 0.0
    built = 0
    for label, kwargs in placements:
        producer = offline_producer()
        send = producer.send
        send_s = 0.0
        previous: list[object] = []
        done = -chunk  # the first chunk warms up, untimed
        while done < records:
            n = min(chunk, records - done) if done >= 0 else chunk
            gc.collect()
            started = time.perf_counter()
            if label.startswith("keyed"):
                for key in keys[:n]:
                    await send("t", VALUE, key=key)
            else:
                for _ in range(n):
                    await send("t", VALUE, **kwargs)
            elapsed = time.perf_counter() - started
            started = time.perf_counter()
            batches = producer._acc.drain_all()
            for batch in batches:
                batch.encode()
            if done >= 0:
                send_s += elapsed
                build_s += time.perf_counter() - started
                built += n
            previous = list(batches)  # the chunk before is released now
            done += n
        del previous
        out[label] = send_s / records * 1e6
    out["batch build (sender side)"] = build_s / built * 1e6
    return out


def main() -> None:
    records = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    for label, us in trio.run(measure, records).items():
        print(f"{label:>28}: {us:.3f} us/record ({1e6 / us:,.0f} records/s)")


if __name__ == "__main__":
    main()
