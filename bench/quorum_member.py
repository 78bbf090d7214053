"""One voter of the metadata-quorum benchmark, driven by bench/metadata_quorum.py.

A real quorum engine as a node runs it (``RaftQuorum``, the default, or ``PysyncobjQuorum``
with ``--engine pysyncobj``) with a ``MetadataFollower`` applying what
commits, in its own process, so a SIGKILL takes the voter down exactly as it takes a node
down. The driver talks to it over stdin/stdout, one JSON object per line:

- ``{"op": "status"}`` → leader flag, leader id, term and applied index;
- ``{"op": "load", "records": N, "in_flight": K}`` → (leader only) commits N metadata
  records with K proposals in flight and answers the elapsed time and commit latencies;
- ``{"op": "first_commit", "after": I, "timeout_s": T}`` → answers once a record past index
  I is committed: the monotonic time of the commit if this voter proposed it as the new
  leader, else only that one was observed.

Times are ``time.monotonic()``: one clock for every process on the machine, so the driver
can subtract the moment it sent SIGKILL.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import trio

from rillet.metadata_quorum.follower import MetadataFollower
from rillet.metadata_quorum.records import ProducerIds, encode_entry
from rillet.raft.errors import RaftError
from rillet.raft.pysyncobj_engine import PysyncobjQuorum, PysyncobjSettings
from rillet.raft.quorum import Quorum
from rillet.raft.raft_quorum import RaftQuorum, RaftSettings
from rillet.raft.transport import PeerAddress

PRODUCER_ID_BLOCK = 1000


def _voters(text: str) -> dict[int, str]:
    pairs = (item.split("=", 1) for item in text.split(","))
    return {int(node_id): address for node_id, address in pairs}


class Member:
    def __init__(self, quorum: Quorum, follower: MetadataFollower) -> None:
        self.quorum = quorum
        self.follower = follower
        self._next_block = 0

    def _record(self) -> bytes:
        self._next_block += 1  # unique per proposal, like the controller's id blocks
        first = (self.quorum.node_id << 40) + self._next_block * PRODUCER_ID_BLOCK
        return encode_entry([ProducerIds(self.quorum.node_id, first, PRODUCER_ID_BLOCK)])

    def status(self) -> dict[str, Any]:
        leadership = self.quorum.leadership()
        return {
            "node_id": self.quorum.node_id,
            "leader": self.quorum.is_leader(),
            "leader_id": leadership.leader_id,
            "term": leadership.term,
            "applied": self.follower.state.last_applied_index,
        }

    async def load(self, records: int, in_flight: int) -> dict[str, Any]:
        if not self.quorum.is_leader():
            return {"error": "not the leader"}
        latencies_ms: list[float] = []
        failures = 0
        remaining = records

        async def worker() -> None:
            nonlocal remaining, failures
            while remaining > 0:
                remaining -= 1
                started = time.perf_counter()
                try:
                    await self.quorum.propose(self._record())
                except RaftError:
                    failures += 1
                    continue
                latencies_ms.append((time.perf_counter() - started) * 1000)

        started = time.perf_counter()
        async with trio.open_nursery() as nursery:
            for _ in range(min(in_flight, records)):
                nursery.start_soon(worker)
        elapsed_s = time.perf_counter() - started
        latencies_ms.sort()
        return {
            "committed": len(latencies_ms),
            "failed": failures,
            "seconds": elapsed_s,
            "latency_ms": _percentiles(latencies_ms),
        }

    async def first_commit(self, after: int, timeout_s: float) -> dict[str, Any]:
        """Propose as soon as this voter leads; stop once anything past ``after`` commits."""
        with trio.move_on_after(timeout_s):
            while self.follower.state.last_applied_index <= after:
                if self.quorum.is_leader():
                    try:
                        await self.quorum.propose(self._record())
                    except RaftError:
                        continue  # lost leadership again, or the proposal's fate is unknown
                    return {"proposed": True, "at": time.monotonic()}
                await trio.sleep(0.002)  # a bench probe: poll leadership every 2 ms
            return {"proposed": False, "at": time.monotonic()}
        return {"error": f"nothing committed within {timeout_s} s"}


def _percentiles(sorted_ms: list[float]) -> dict[str, float]:
    if not sorted_ms:
        return {}
    n = len(sorted_ms)
    return {f"p{q:g}": round(sorted_ms[min(n - 1, int(n * q / 100))], 3) for q in (50, 99, 99.9)}


async def serve(args: argparse.Namespace) -> None:
    secret = Path(args.secret_file).read_text().strip()
    quorum: Quorum
    if args.engine == "raft":
        peers = {
            nid: PeerAddress(*addr.rsplit(":", 1)[:1], int(addr.rsplit(":", 1)[1]))
            for nid, addr in _voters(args.voters).items()
        }
        quorum = RaftQuorum(
            args.node_id,
            peers,
            Path(args.data_dir),
            secret,
            RaftSettings(
                tick_ms=args.heartbeat_ms,
                election_timeout_ticks=max(2, args.election_timeout_min_ms // args.heartbeat_ms),
            ),
        )
    else:
        settings = PysyncobjSettings(
            election_timeout_min_s=args.election_timeout_min_ms / 1000,
            election_timeout_max_s=args.election_timeout_max_ms / 1000,
            heartbeat_s=args.heartbeat_ms / 1000,
        )
        quorum = PysyncobjQuorum(  # on the trio thread: pysyncobj's tick thread lives with it
            args.node_id,
            _voters(args.voters),
            Path(args.data_dir),
            secret,
            trio.lowlevel.current_trio_token(),
            settings=settings,
        )
    follower = MetadataFollower(quorum, snapshot_every=args.snapshot_every_records)
    member = Member(quorum, follower)
    stdin = trio.wrap_file(sys.stdin)
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(quorum.run)
            nursery.start_soon(follower.run)
            _reply({"ready": True})
            while line := await stdin.readline():
                command = json.loads(line)
                match command.get("op"):
                    case "status":
                        _reply(member.status())
                    case "load":
                        _reply(await member.load(command["records"], command["in_flight"]))
                    case "first_commit":
                        _reply(await member.first_commit(command["after"], command["timeout_s"]))
                    case other:
                        _reply({"error": f"unknown op {other!r}"})
            nursery.cancel_scope.cancel()  # stdin closed: the driver is done with us
    finally:
        quorum.close()


def _reply(message: dict[str, Any]) -> None:
    print(json.dumps(message), flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--node-id", type=int, required=True)
    p.add_argument("--voters", required=True, help="id=host:port,... (Raft ports)")
    p.add_argument("--data-dir", required=True)
    p.add_argument("--secret-file", required=True)
    p.add_argument("--election-timeout-min-ms", type=int, default=300)
    p.add_argument("--election-timeout-max-ms", type=int, default=600)
    p.add_argument("--heartbeat-ms", type=int, default=50)
    p.add_argument("--snapshot-every-records", type=int, default=10_000)
    p.add_argument("--engine", choices=["pysyncobj", "raft"], default="raft")
    trio.run(serve, p.parse_args())


if __name__ == "__main__":
    main()
