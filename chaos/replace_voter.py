"""The ``replace-voter`` fault: a voter's machine dies with its disk and is replaced.

What an operator does (docs/operations-membership.md, "Replace a dead voter"), during the
other faults and the workload:

* At the step's start the target voter (the Raft leader or a node, drawn by the schedule)
  is SIGKILLed and its whole data directory deleted; then the old identity, (node id, its
  directory id), is removed from the voters. The two voters left form the quorum, so the
  step counts one node down in the schedule's budget until its heal and recovery gap.
* At the heal the node is started again with an empty data directory, under the same id
  and addresses; it draws a new directory id, catches up as an observer and is added as a
  voter under that id. A removal whose outcome was unknown is asked again first (a second
  answer "not a voter" means it was done). ``heal_all`` runs this heal too, so a
  replacement under way when the run ends is completed; one that cannot be completed is
  recorded in the step's detail and the checker reports it (:func:`voter_set`).

Every request goes to any live node (a node that does not lead forwards it to the leader)
and is retried while the answer says "not now" (no leader yet, the previous change not
committed, a timeout), within :data:`CHANGE_DEADLINE_S`. Requests answer instead of
raising: what happened is in the step's detail.

A known limit of the proxy network mode: the configuration entry that adds the node back
carries its Raft port itself (one address for every replica), so from then on the other
voters' Raft links to it bypass the per-link proxies and a later network partition around
it cuts its broker links but not its Raft links.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from rillet.chaos import probes
from rillet.chaos.checker import Violation
from rillet.chaos.final_state import FinalState
from rillet.chaos.history import History
from rillet.client.connection import BrokerConnection
from rillet.client.errors import RilletError
from rillet.launcher.local_cluster import LocalCluster
from rillet.wire.error_codes import ErrorCode
from rillet.wire.raft_voter_messages import AddRaftVoterRequest, RemoveRaftVoterRequest

if TYPE_CHECKING:
    from rillet.chaos.nemesis import Active, Nemesis
    from rillet.chaos.schedule import FaultStep

KIND = "replace-voter"
CHANGE_DEADLINE_S = 30.0  # per voter change, retries included
ATTEMPT_TIMEOUT_S = 10.0  # one request (adding waits for the catch-up)
RETRY_S = 0.3
# Answers that mean "ask again": no leader yet, a change still under way, outcome unknown.
RETRIED = (
    ErrorCode.NOT_CONTROLLER,
    ErrorCode.REQUEST_TIMED_OUT,
    ErrorCode.INVALID_REQUEST,  # "the previous configuration change is not committed yet"
    ErrorCode.NETWORK_EXCEPTION,
)
DIRECTORY_ID_FILE = Path("data") / "__raft" / "raft" / "directory-id"


def directory_id(work_dir: str | Path) -> str | None:
    """The node's Raft directory id, as its data directory records it (None: no file)."""
    try:
        return (Path(work_dir) / DIRECTORY_ID_FILE).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def settled(code: int, done_if: ErrorCode) -> bool:
    """Whether an answer ends the retries: success, or ``done_if`` (the change was made by
    an earlier attempt whose answer was lost)."""
    return code in (ErrorCode.NONE, done_if) or ErrorCode.from_wire(code) not in RETRIED


async def _ask(targets: list[tuple[str, int]], request: Any) -> tuple[int, str]:
    """One attempt: the first target that answers."""
    last = "no node answered"
    for host, port in targets:
        try:
            async with trio.open_nursery() as nursery:
                conn = BrokerConnection(host, port, client_id="rillet-chaos-voters")
                try:
                    await conn.connect(nursery, ATTEMPT_TIMEOUT_S)
                    answer = await conn.request(request, ATTEMPT_TIMEOUT_S)
                    return int(answer.error_code), str(answer.error_message or "")
                finally:
                    conn.close()
        except* RilletError as group:
            last = f"{host}:{port}: {group.exceptions[0]}"
    return int(ErrorCode.NETWORK_EXCEPTION), last


async def _change(
    targets: list[tuple[str, int]], request: Any, done_if: ErrorCode, deadline_s: float
) -> dict[str, Any]:
    attempts = 0
    code, message = int(ErrorCode.NETWORK_EXCEPTION), "no attempt"
    with trio.move_on_after(deadline_s):
        while True:
            attempts += 1
            code, message = await _ask(targets, request)
            if settled(code, done_if):
                break
            await trio.sleep(RETRY_S)
    name = ErrorCode.from_wire(code).name
    done = code in (ErrorCode.NONE, done_if)
    return {"result": name, "done": done, "attempts": attempts, "message": message[:200]}


def change_voters(
    targets: list[tuple[str, int]],
    request: Any,
    done_if: ErrorCode,
    deadline_s: float = CHANGE_DEADLINE_S,
) -> dict[str, Any]:
    """Send an AddRaftVoter/RemoveRaftVoter request until it is settled (bounded)."""
    if not targets:
        return {"result": "NO_NODE_UP", "done": False, "attempts": 0}
    return dict(trio.run(_change, targets, request, done_if, deadline_s))


def _targets(nemesis: Nemesis, exclude: int) -> list[tuple[str, int]]:
    out = []
    for i in nemesis.up():
        if i != exclude:
            host, _, port = nemesis.cluster.plan.node(i).bootstrap.rpartition(":")
            out.append((host, int(port)))
    return out


class ReplaceVoter:
    """The nemesis side: kill and wipe, remove; at the heal restart and add."""

    def apply(self, nemesis: Nemesis, step: FaultStep, node: int) -> dict[str, Any]:
        work_dir = nemesis.cluster.plan.node(node).work_dir
        old = directory_id(work_dir)
        nemesis.cluster.kill(node)
        shutil.rmtree(Path(work_dir) / "data", ignore_errors=True)
        detail: dict[str, Any] = {"old_directory": old}
        if old is None:
            detail["remove"] = {"result": "NO_DIRECTORY_ID", "done": False}
            return detail
        request = RemoveRaftVoterRequest(node, old)
        detail["remove"] = change_voters(
            _targets(nemesis, node), request, ErrorCode.VOTER_NOT_FOUND
        )
        return detail

    def heal(self, nemesis: Nemesis, active: Active) -> dict[str, Any]:
        node, detail = active.node, active.detail
        out: dict[str, Any] = {}
        old = detail.get("old_directory")
        remove = detail.get("remove", {})
        if old and not remove.get("done"):
            request = RemoveRaftVoterRequest(node, str(old))
            out["remove_again"] = change_voters(
                _targets(nemesis, node), request, ErrorCode.VOTER_NOT_FOUND
            )
        out.update(nemesis.restart(node))
        new = directory_id(nemesis.cluster.plan.node(node).work_dir)
        out["new_directory"] = new
        if new is None or not nemesis.cluster.alive(node):
            out["add"] = {"result": "NOT_STARTED", "done": False}
            return out
        plan = nemesis.cluster.plan.node(node)
        add = AddRaftVoterRequest(node, new, f"{plan.host}:{plan.raft_port}", plan.bootstrap)
        out["add"] = change_voters(_targets(nemesis, node), add, ErrorCode.DUPLICATE_VOTER)
        return out


def leader_voters(cluster: LocalCluster, leader: int) -> list[tuple[int, str]] | None:
    """The voters (id, directory id) as the Raft leader reports them (only the leader
    knows every voter's directory and progress; None: it did not answer)."""
    view = probes.quorum_views(cluster, [leader]).get(leader)
    if view is None or view.leader_id != leader:
        return None
    return sorted((v.voter_id, v.directory_id) for v in view.voter_states)


def intended_voters(history: History) -> tuple[set[int], dict[int, str | None]]:
    """The voter ids a run should end with (its nodes) and, per replaced node, the
    directory id it was added back under (None: the replacement did not finish)."""
    config = history.meta.get("config", {})
    ids = set(range(1, int(config.get("nodes", 0)) + 1))
    directories: dict[int, str | None] = {}
    for fault in history.faults:
        if fault.kind != KIND or fault.skipped is not None or fault.node is None:
            continue
        add = fault.detail.get("add", {})
        done = isinstance(add, dict) and bool(add.get("done"))
        directories[int(fault.node)] = fault.detail.get("new_directory") if done else None
    return ids, directories


def voter_set(history: History, final: FinalState) -> list[Violation]:
    """After replacements, the quorum's voters are the run's nodes, each replaced node
    under the directory id it was added back with (not its old one)."""
    ids, directories = intended_voters(history)
    if not directories:
        return []
    problems = [f"replacing node {n} did not finish" for n, d in directories.items() if not d]
    if final.voters is None:
        problems.append("the final voter set is unknown (no agreed DescribeQuorum view)")
    else:
        actual = dict(final.voters)
        if set(actual) != ids:
            problems.append(f"voters {sorted(actual)}, expected {sorted(ids)}")
        for n, d in sorted(directories.items()):
            if d and actual.get(n) != d:
                problems.append(f"node {n} votes under directory {actual.get(n)}, expected {d}")
    if not problems:
        return []
    return [
        Violation(
            "voter-set",
            "the quorum did not end with the intended voters: " + "; ".join(problems),
            {"problems": problems, "voters": final.voters},
        )
    ]
