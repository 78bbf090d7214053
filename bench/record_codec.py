"""Record codec cost per record, in process (no node, no network): the client's hot paths.

Builds batches of N records (default 2,400 x 100 B, about one 256 KiB producer batch) and
times, per record: ``BatchBuilder.append`` alone, append plus ``build``, wire's
``decode_records`` and the consumer's ``decode_record_set`` (CRC check, decoding and one
ConsumerRecord each). Two shapes: ``uniform`` (no key, one value size, the producer's
common case, decoded in C) and ``mixed`` (keys and value sizes vary, one record in ten has
a header: the general decoder). Each figure is the best of ``--repeat`` runs, which is the
figure least disturbed by other work on a shared machine. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from _common import emit

from rillet.client.fetch_decoder import decode_record_set
from rillet.wire.batch import BatchBuilder, assign_offset_and_epoch, decode_records

T0 = 1_700_000_000_000
Record = tuple[int, bytes | None, bytes, list[tuple[str, bytes | None]] | None]


def shape_records(shape: str, n: int, size: int) -> list[Record]:
    if shape == "uniform":
        return [(T0 + i // 800, None, b"x" * size, None) for i in range(n)]
    return [
        (
            T0 + i // 800,
            b"user-%d" % (i % 997) if i % 3 else None,
            b"y" * (size // 2 + i % size),
            [("trace", b"%d" % i)] if i % 10 == 0 else None,
        )
        for i in range(n)
    ]


def best_ns(run: Callable[[], Any], repeat: int, per: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return round(min(times) / per * 1e9, 1)


def measure(shape: str, n: int, size: int, repeat: int) -> dict[str, float]:
    records = shape_records(shape, n, size)

    def append_only() -> BatchBuilder:
        builder = BatchBuilder()
        append = builder.append
        for ts, key, value, headers in records:
            append(ts, key, value, headers)
        return builder

    built = bytearray(append_only().build())
    assign_offset_and_epoch(built, 0, 0, 0)
    batch = bytes(built)
    return {
        "append_ns": best_ns(append_only, repeat, n),
        "append_and_build_ns": best_ns(lambda: append_only().build(), repeat, n),
        "decode_records_ns": best_ns(lambda: decode_records(batch), repeat, n),
        "consumer_decode_ns": best_ns(lambda: decode_record_set(batch, "t", 0, 0, True), repeat, n),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--num-records", type=int, default=2400, help="records per batch")
    p.add_argument("--record-size", type=int, default=100)
    p.add_argument("--repeat", type=int, default=30)
    args = p.parse_args()
    result = {
        shape: measure(shape, args.num_records, args.record_size, args.repeat)
        for shape in ("uniform", "mixed")
    }
    emit("record_codec", vars(args), result)


if __name__ == "__main__":
    main()
