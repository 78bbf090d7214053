"""Asks every node of a cluster for its status (DescribeQuorum, what ``rillet cluster
status`` shows) every 250 ms with a 1 s deadline, until its standard input closes; then
prints a JSON summary: answers, how many missed the deadline, the slowest, and every Raft
(leader, term) seen.

A process of its own, as an operator's ``rillet cluster status`` is: run as a thread of the
benchmark, its answers waited for the benchmark's own producer (the interpreter lock and the
producer's garbage collections), and the figure measured the client, not the nodes.

Usage: python status_poller.py PORT [PORT ...]
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

import trio

from rillet.client.connection import BrokerConnection
from rillet.client.errors import RilletError
from rillet.wire.cluster_messages import DescribeQuorumRequest

STATUS_DEADLINE_S = 1.0
STATUS_EVERY_S = 0.25


class Poll:
    def __init__(self, ports: list[int]) -> None:
        self._ports = ports
        self.stop = threading.Event()
        self.latencies_s: list[float] = []
        self.missed = 0
        self.misses: list[list[Any]] = []
        self.leaders: set[tuple[int, int]] = set()

    async def run(self) -> None:
        while not self.stop.is_set():
            async with trio.open_nursery() as nursery:
                for port in self._ports:
                    nursery.start_soon(self._ask, port)
            await trio.sleep(STATUS_EVERY_S)

    async def _ask(self, port: int) -> None:
        start = time.monotonic()
        answer = None
        stage = "connect"
        with trio.move_on_after(STATUS_DEADLINE_S):
            try:
                async with trio.open_nursery() as nursery:
                    conn = BrokerConnection("127.0.0.1", port, client_id="bench-status")
                    await conn.connect(nursery, STATUS_DEADLINE_S)
                    stage = "request"
                    try:
                        answer = await conn.request(DescribeQuorumRequest(), STATUS_DEADLINE_S)
                    finally:
                        conn.close()
            except* RilletError as group:
                stage = f"{stage}: {group.exceptions[0]}"
        elapsed = time.monotonic() - start
        if answer is None:
            self.missed += 1
            # When (wall clock, to match the nodes' logs), which node, at which stage.
            self.misses.append([time.strftime("%H:%M:%S", time.localtime()), port, stage])
            return
        self.latencies_s.append(elapsed)
        if answer.leader_id >= 0:
            self.leaders.add((answer.leader_id, answer.term))

    def summary(self) -> dict[str, Any]:
        lat = sorted(self.latencies_s)
        return {
            "status_answers": len(lat),
            "status_missed_1s": self.missed,
            "status_misses": self.misses,
            "status_max_ms": round(lat[-1] * 1000, 1) if lat else None,
            "status_p99_ms": round(lat[int(len(lat) * 0.99)] * 1000, 1) if lat else None,
            "raft_leaders_seen": sorted(self.leaders),
        }


def main() -> None:
    poll = Poll([int(p) for p in sys.argv[1:]])

    def wait_for_eof() -> None:
        sys.stdin.read()
        poll.stop.set()

    threading.Thread(target=wait_for_eof, daemon=True).start()
    trio.run(poll.run)
    print(json.dumps(poll.summary()), flush=True)


if __name__ == "__main__":
    main()
