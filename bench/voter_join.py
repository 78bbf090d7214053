"""How long a new Raft voter takes to join a quorum whose log holds N metadata records.

Three voters of our own engine (``RaftQuorum``, real sockets on loopback, real fsynced files)
commit ``--records`` entries of ``--record-bytes`` each (``--in-flight`` proposals at a
time); a fourth node, started as an observer, is then added (``add_voter``): it catches up
from an empty log and a configuration entry makes it a voter. Reported: the time from the
request to the committed configuration ("caught up and voting"), and the time until the new
voter has applied everything the leader had committed. No snapshot is taken, so the whole log
is replicated: the worst case (a node's controller snapshots every
``quorum.snapshot_every_records``; a snapshot replaces most of the log).

    python bench/voter_join.py --records 100000
"""

from __future__ import annotations

import argparse
import socket
import sys
import tempfile
import time
from pathlib import Path

import trio
from _common import emit

from rillet.raft.errors import NotLeaderError, ProposalOutcomeUnknown
from rillet.raft.raft_quorum import RaftQuorum, RaftSettings
from rillet.raft.transport import PeerAddress

SECRET = "voter-join-bench-secret"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def leader_of(members: dict[int, RaftQuorum]) -> RaftQuorum:
    with trio.fail_after(30):
        while True:
            leaders = [m for m in members.values() if m.is_leader()]
            if len(leaders) == 1:
                return leaders[0]
            await trio.sleep(0.01)


async def load(members: dict[int, RaftQuorum], records: int, size: int, in_flight: int) -> None:
    payload = b"x" * size
    sent = 0

    async def writer() -> None:
        nonlocal sent
        while sent < records:
            sent += 1
            while True:
                try:
                    await (await leader_of(members)).propose(payload)
                    break
                except (NotLeaderError, ProposalOutcomeUnknown):
                    await trio.sleep(0.01)

    async with trio.open_nursery() as nursery:
        for _ in range(in_flight):
            nursery.start_soon(writer)


async def run(records: int, size: int, in_flight: int, base: Path, batch: int) -> dict[str, float]:
    addresses = {i: PeerAddress("127.0.0.1", free_port()) for i in (1, 2, 3, 4)}
    configured = {i: addresses[i] for i in (1, 2, 3)}
    settings = RaftSettings(catch_up_timeout_ms=120_000, max_append_entries=batch)
    members: dict[int, RaftQuorum] = {}
    async with trio.open_nursery() as nursery:
        for i in (1, 2, 3, 4):
            member = RaftQuorum(
                i, configured, base / f"n{i}", SECRET, settings, listen=addresses[i]
            )
            await nursery.start(member.run)
            members[i] = member
        voters = {i: members[i] for i in (1, 2, 3)}
        started = time.monotonic()
        await load(voters, records, size, in_flight)
        load_s = time.monotonic() - started
        print(f"{records} records committed in {load_s:.1f} s", file=sys.stderr)
        leader = await leader_of(voters)
        target = leader.commit_index()
        new = members[4]
        asked = time.monotonic()
        await leader.add_voter(4, new.directory_id, f"127.0.0.1:{addresses[4].port}")
        voting_s = time.monotonic() - asked
        with trio.fail_after(120):
            while new.commit_index() < target:
                await trio.sleep(0.005)
        applied_s = time.monotonic() - asked
        nursery.cancel_scope.cancel()
    for member in members.values():
        member.close()
    return {
        "load_s": round(load_s, 2),
        "voting_s": round(voting_s, 3),
        "applied_s": round(applied_s, 3),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--records", type=int, default=100_000)
    p.add_argument("--record-bytes", type=int, default=100)
    p.add_argument("--in-flight", type=int, default=256)
    p.add_argument("--append-entries", type=int, default=256, help="per AppendEntries message")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="voter-join-") as tmp:
        result = trio.run(
            run, args.records, args.record_bytes, args.in_flight, Path(tmp), args.append_entries
        )
    emit(
        "voter_join",
        {
            "records": args.records,
            "record_bytes": args.record_bytes,
            "in_flight": args.in_flight,
            "append_entries": args.append_entries,
        },
        result,
    )


if __name__ == "__main__":
    main()
