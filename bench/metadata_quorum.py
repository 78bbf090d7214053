"""Metadata-quorum benchmark: commits/s through 3 voters, and failover after a leader SIGKILL.

Three voter processes (bench/quorum_member.py: the node's quorum engine -- ``--engine raft``,
the default, or ``pysyncobj`` -- and ``MetadataFollower``) on loopback, with their Raft files
in a temporary directory.

- Throughput: the leader commits ``--records`` metadata records (a producer-id block each,
  one Raft entry per record, as the controller writes them) with ``--in-flight`` proposals
  outstanding; repeated ``--runs`` times.
- Failover: ``--kills`` times, SIGKILL the leader and measure until a new leader has
  committed a record (both survivors propose as soon as they lead); the killed voter is
  restarted from its files and catches up before the next round.

Prints one JSON line (see bench/_common.py); progress goes to stderr.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import emit, parser

MEMBER = Path(__file__).resolve().parent / "quorum_member.py"
REPLY_TIMEOUT_S = 60.0


class Member:
    """A voter process and its line-based command channel."""

    def __init__(self, node_id: int, argv: list[str]) -> None:
        self.node_id = node_id
        self._argv = argv
        self.proc = self._spawn()

    def _spawn(self) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        self.proc = proc
        if self.read().get("ready") is not True:
            raise RuntimeError(f"voter {self.node_id} did not start")
        return proc

    def restart(self) -> None:
        self._spawn()

    def send(self, command: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()

    def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"voter {self.node_id} exited (code {self.proc.poll()})")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def call(self, command: dict[str, Any]) -> dict[str, Any]:
        self.send(command)
        return self.read()

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            if self.proc.stdin is not None:
                self.proc.stdin.close()  # the member's cue to leave cleanly
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def wait_for_leader(members: dict[int, Member], timeout_s: float = 30.0) -> int:
    """Poll until every live voter names the same leader and that voter says it leads."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        statuses = [m.call({"op": "status"}) for m in members.values()]
        named = {s["leader_id"] for s in statuses}
        leaders = [s["node_id"] for s in statuses if s["leader"]]
        if len(named) == 1 and leaders and named == {leaders[0]}:
            return int(leaders[0])
        time.sleep(0.01)  # a bench probe, not a test: poll the voters every 10 ms
    raise RuntimeError(f"no agreed leader within {timeout_s} s")


def wait_caught_up(members: dict[int, Member], timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        applied = {m.call({"op": "status"})["applied"] for m in members.values()}
        if len(applied) == 1:
            return
        time.sleep(0.01)
    raise RuntimeError(f"the voters did not catch up within {timeout_s} s")


def throughput_round(leader: Member, records: int, in_flight: int) -> dict[str, Any]:
    result = leader.call({"op": "load", "records": records, "in_flight": in_flight})
    if "error" in result:
        raise RuntimeError(result["error"])
    result["records_per_s"] = round(result["committed"] / result["seconds"])
    return result


def failover_round(members: dict[int, Member]) -> dict[str, Any]:
    leader_id = wait_for_leader(members)
    wait_caught_up(members)
    after = members[leader_id].call({"op": "status"})["applied"]
    survivors = [m for nid, m in members.items() if nid != leader_id]
    killed_at = time.monotonic()
    members[leader_id].kill()
    for m in survivors:
        m.send({"op": "first_commit", "after": after, "timeout_s": REPLY_TIMEOUT_S})
    replies = [m.read() for m in survivors]
    proposed = [r["at"] for r in replies if r.get("proposed")]
    if not proposed:
        raise RuntimeError(f"no survivor committed after the kill: {replies}")
    members[leader_id].restart()
    new_leader = wait_for_leader(members)
    wait_caught_up(members)
    return {
        "killed": leader_id,
        "new_leader": new_leader,
        "failover_ms": round((min(proposed) - killed_at) * 1000, 1),
    }


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--records", type=int, default=20_000, help="records per throughput run")
    p.add_argument("--in-flight", type=int, default=1000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--kills", type=int, default=5)
    p.add_argument("--election-timeout-min-ms", type=int, default=300)
    p.add_argument("--election-timeout-max-ms", type=int, default=600)
    p.add_argument("--heartbeat-ms", type=int, default=50)
    p.add_argument("--engine", choices=["pysyncobj", "raft"], default="raft")
    args = p.parse_args()
    if args.bootstrap:
        p.error("this bench runs its own voters; --bootstrap does not apply")

    with tempfile.TemporaryDirectory(prefix="rillet-quorum-bench-") as tmp:
        base = Path(tmp)
        secret_file = base / "cluster.secret"
        secret_file.write_text(secrets.token_urlsafe(32))
        os.chmod(secret_file, 0o600)
        voters = {i: f"127.0.0.1:{_free_port()}" for i in (1, 2, 3)}
        voter_arg = ",".join(f"{i}={a}" for i, a in voters.items())
        members: dict[int, Member] = {}
        try:
            for i in voters:
                members[i] = Member(
                    i,
                    [
                        sys.executable,
                        str(MEMBER),
                        f"--node-id={i}",
                        f"--voters={voter_arg}",
                        f"--data-dir={base / f'voter{i}'}",
                        f"--secret-file={secret_file}",
                        f"--election-timeout-min-ms={args.election_timeout_min_ms}",
                        f"--election-timeout-max-ms={args.election_timeout_max_ms}",
                        f"--heartbeat-ms={args.heartbeat_ms}",
                        f"--engine={args.engine}",
                    ],
                )
            leader = wait_for_leader(members)
            _log(f"leader: voter {leader}; warming up")
            throughput_round(members[leader], min(2000, args.records), args.in_flight)
            rounds = []
            for run in range(args.runs):
                leader = wait_for_leader(members)
                rounds.append(throughput_round(members[leader], args.records, args.in_flight))
                _log(f"run {run + 1}: {rounds[-1]['records_per_s']} records/s")
            failovers = []
            for kill in range(args.kills):
                failovers.append(failover_round(members))
                _log(f"kill {kill + 1}: {failovers[-1]}")
        finally:
            for m in members.values():
                m.stop()

    rates = [r["records_per_s"] for r in rounds]
    failover_ms = [f["failover_ms"] for f in failovers]
    emit(
        "metadata_quorum",
        {
            "records": args.records,
            "in_flight": args.in_flight,
            "runs": args.runs,
            "kills": args.kills,
            "engine": args.engine,
            "election_timeout_ms": [args.election_timeout_min_ms, args.election_timeout_max_ms],
            "heartbeat_ms": args.heartbeat_ms,
        },
        {
            "records_per_s": rates,
            "records_per_s_median": statistics.median(rates) if rates else None,
            "commit_latency_ms": [r["latency_ms"] for r in rounds],
            "failover_ms": failover_ms,
            "failover_ms_median": statistics.median(failover_ms) if failover_ms else None,
            "failover_ms_max": max(failover_ms) if failover_ms else None,
            "failovers": failovers,
        },
    )


if __name__ == "__main__":
    main()
