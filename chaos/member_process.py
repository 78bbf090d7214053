"""A consumer-group member as its own process, so the harness can SIGKILL or SIGTERM it.

Run as ``python -m rillet.chaos.member_process --bootstrap B --group G --topic T --out F
--name N --t0 T0``. It consumes with a GroupConsumer (auto-commit every 200 ms) and appends
one JSON line per record to F — ``{"m": name, "p": partition, "o": offset, "v": value,
"t": seconds since T0}`` — written and flushed before the next ``poll``, so a record in the
file was really handed to the application before any commit could cover it. Assignment
changes are logged too (``{"e": "assigned"|"revoked", "ps": [...]}``). SIGTERM closes the
consumer: it commits, leaves the group and exits 0.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from typing import IO

import trio

from rillet.client import GroupConsumer, TopicPartition
from rillet.client.errors import RilletError

AUTO_COMMIT_MS = 200
POLL_MS = 200


class _Journal:
    """The member's output file: one flushed JSON line per event."""

    def __init__(self, f: IO[str], name: str, t0: float) -> None:
        self._f, self._name, self._t0 = f, name, t0

    def line(self, row: dict[str, object]) -> None:
        row["t"] = round(time.monotonic() - self._t0, 6)
        self._f.write(json.dumps(row, separators=(",", ":")) + "\n")

    def flush(self) -> None:
        self._f.flush()

    def on_partitions_revoked(self, partitions: set[TopicPartition]) -> None:
        self.line({"m": self._name, "e": "revoked", "ps": sorted(p.partition for p in partitions)})
        self.flush()

    def on_partitions_assigned(self, partitions: set[TopicPartition]) -> None:
        ps = sorted(p.partition for p in partitions)
        self.line({"m": self._name, "e": "assigned", "ps": ps})
        self.flush()


async def run(args: argparse.Namespace) -> None:
    with open(args.out, "a", encoding="utf-8") as f:
        journal = _Journal(f, args.name, args.t0)
        async with (
            GroupConsumer(
                args.bootstrap,
                args.group,
                topics=[args.topic],
                listener=journal,
                session_timeout_ms=args.session_ms,
                auto_commit_interval_ms=AUTO_COMMIT_MS,
                request_timeout_ms=5_000,
                client_id=f"chaos-{args.name}",
            ) as consumer,
            trio.open_nursery() as nursery,
        ):
            nursery.start_soon(_stop_on_sigterm, nursery.cancel_scope)
            while True:
                try:
                    records = await consumer.poll(POLL_MS)
                except RilletError as exc:  # e.g. a refused commit: keep consuming
                    print(f"poll: {exc!r}", file=sys.stderr, flush=True)
                    await trio.sleep(POLL_MS / 1000)
                    continue
                for r in records:
                    value = r.value.decode(errors="replace") if r.value is not None else ""
                    journal.line({"m": args.name, "p": r.partition, "o": r.offset, "v": value})
                if records:
                    journal.flush()
        # Leaving the GroupConsumer committed the positions and left the group.


async def _stop_on_sigterm(scope: trio.CancelScope) -> None:
    with trio.open_signal_receiver(signal.SIGTERM) as signals:
        async for _ in signals:
            scope.cancel()
            return


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--group", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--session-ms", type=int, default=6_000)
    p.add_argument("--t0", type=float, default=0.0, help="time.monotonic() of the run start")
    trio.run(run, p.parse_args())


if __name__ == "__main__":
    main()
