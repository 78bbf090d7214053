"""A consumer-group member process for the integration tests (SIGKILL-able).

Usage: python group_member.py BOOTSTRAP GROUP TOPIC OUT_FILE [SESSION_MS]
Consumes with a GroupConsumer (auto-commit every 200 ms; SIGTERM closes it: commit and leave)
and appends one JSON line per record
to OUT_FILE ({"p": partition, "o": offset, "v": value}), flushed at once, so whatever the test
reads was really delivered to this member before it died.
"""

from __future__ import annotations

import json
import signal
import sys

import trio

from rillet.client import GroupConsumer


async def main(bootstrap: str, group: str, topic: str, out: str, session_ms: int) -> None:
    with open(out, "a", encoding="utf-8") as f:
        async with GroupConsumer(
            bootstrap,
            group,
            topics=[topic],
            session_timeout_ms=session_ms,
            auto_commit_interval_ms=200,
        ) as consumer:
            print("ready", flush=True)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_stop_on_sigterm, nursery.cancel_scope)
                while True:
                    for r in await consumer.poll(200):
                        row = {"p": r.partition, "o": r.offset, "v": r.value.decode()}
                        f.write(json.dumps(row) + "\n")
                        f.flush()
        # Leaving the GroupConsumer committed the positions and left the group.


async def _stop_on_sigterm(scope: trio.CancelScope) -> None:
    with trio.open_signal_receiver(signal.SIGTERM) as signals:
        async for _ in signals:
            scope.cancel()
            return


if __name__ == "__main__":
    session = int(sys.argv[5]) if len(sys.argv) > 5 else 3000
    trio.run(main, sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], session)
