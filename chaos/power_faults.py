"""Power cuts and disk faults: the nemesis side of ``chaos/lazy_disk.py``.

Runs with any of these kinds start every node through ``rillet.cli.faulty_node`` (the
test entry point with the LazyDisk layer under its stores; :func:`faulty_wrap`). A fault is
an order written to the node's control file, then ``SIGUSR2``:

- ``power-cut``: the target drops every write it has not fsynced and exits at once;
  restarted at the heal.
- ``power-cut-all``: the same for every node at the same moment; all restarted together at
  the heal (the steps name one node, the others count as down through ``minority``).
- ``disk-slow``: every fsync of the target takes ``slow_fsync_ms`` (1-2 s) first.
- ``disk-eio``: reads or writes of one partition's files, or of the Raft log, fail with EIO.
- ``disk-full``: writes that grow one partition's files, or the Raft log, fail with ENOSPC.

A node may stop because of a disk fault (the store refuses to go on rather than serve wrong
data); that is not a crash, and the node is started again: at the heal if it has exited by
then, else as soon as the nemesis sees it gone (a node that met the fault may finish stopping
after the heal; :func:`stopped_by_disk_fault` tells its exit from a crash).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rillet.chaos.lazy_disk import POWER_CUT_EXIT_STATUS
from rillet.launcher.local_node import NodeStartError

if TYPE_CHECKING:
    from rillet.chaos.nemesis import Active, Nemesis
    from rillet.chaos.schedule import FaultStep

CONTROL_FILE = "disk-control.json"
# Names a deliberately broken node variant (cli/broken_variants.py) for the runs it starts.
BROKEN_ENV = "RILLET_CHAOS_BROKEN"
POWER_CUT_WAIT_S = 10.0  # a node applies a cut and exits well within this
DISK_KINDS = ("power-cut", "power-cut-all", "disk-slow", "disk-eio", "disk-full")
RAFT_PATH_TEXT = "/__raft/"  # the Raft log's directory under the data directory
# How a node that stopped on a disk error exits (cli/node_command.py EXIT_START_FAILED), and
# the text the fault layer puts in every error it injects (chaos/lazy_disk.py).
DISK_STOP_STATUS = 2
INJECTED_TEXT = "(injected)"
NODE_COMMAND_LOGGER = "rillet.cli.node_command"


def faulty_wrap(work_dir_of: Any) -> Any:
    """A node wrap running each node through ``faulty_node`` with its own control file.

    ``work_dir_of(node_id)`` is the node's work directory."""

    def wrap(node_id: int, argv: list[str]) -> list[str]:
        control = Path(work_dir_of(node_id)) / CONTROL_FILE
        if argv[1:3] != ["-m", "rillet.cli.main"]:
            raise ValueError(f"not a node command: {argv[:3]}")
        broken = os.environ.get(BROKEN_ENV, "")  # a deliberately broken node (tests)
        return [
            sys.executable,
            "-m",
            "rillet.cli.faulty_node",
            "--control",
            str(control),
            *(["--broken", broken] if broken else []),
            "--",
            *argv[3:],
        ]

    return wrap


def stopped_by_disk_fault(status: int | None, log_tail: str) -> bool:
    """A node's exit is its answer to an injected disk error, not a crash: it exited with the
    stop status and the last line the node command logged names an injected error."""
    if status != DISK_STOP_STATUS:
        return False
    lines = [line for line in log_tail.splitlines() if NODE_COMMAND_LOGGER in line]
    return bool(lines) and INJECTED_TEXT in lines[-1]


def send_order(nemesis: Nemesis, node: int, order: dict[str, Any]) -> None:
    control = Path(nemesis.cluster.plan.node(node).work_dir) / CONTROL_FILE
    tmp = control.with_suffix(".tmp")
    tmp.write_text(json.dumps(order))
    tmp.replace(control)
    nemesis.cluster.signal(node, signal.SIGUSR2)


def power_cut(nemesis: Nemesis, nodes: list[int]) -> dict[str, Any]:
    """Cut the power of ``nodes`` at once; wait for each to exit (SIGKILL if one does not:
    then only what its layer had undone by then is lost, and the detail says so)."""
    alive = [n for n in nodes if nemesis.cluster.alive(n)]
    for n in alive:
        send_order(nemesis, n, {"power_cut": True})
    statuses: dict[str, Any] = {}
    deadline = time.monotonic() + POWER_CUT_WAIT_S
    while any(nemesis.cluster.alive(n) for n in alive) and time.monotonic() < deadline:
        time.sleep(0.02)
    for n in alive:
        if nemesis.cluster.alive(n):
            nemesis.cluster.kill(n)
            statuses[str(n)] = "killed"
        else:
            statuses[str(n)] = nemesis.cluster.stop(n)  # reaps it: its exit status
    cut = [n for n in alive if statuses[str(n)] == POWER_CUT_EXIT_STATUS]
    return {"cut": cut, "statuses": statuses}


class PowerCut:
    def apply(self, nemesis: Nemesis, step: FaultStep, node: int) -> dict[str, Any]:
        return power_cut(nemesis, [node])

    def heal(self, nemesis: Nemesis, active: Active) -> dict[str, Any]:
        return nemesis.restart(active.node)


class PowerCutAll:
    def apply(self, nemesis: Nemesis, step: FaultStep, node: int) -> dict[str, Any]:
        nodes = [n for n in nemesis.node_ids if n not in nemesis.down()]
        return {"minority": nodes, **power_cut(nemesis, nodes)}

    def heal(self, nemesis: Nemesis, active: Active) -> dict[str, Any]:
        nodes = [int(n) for n in active.detail.get("minority", [active.node])]
        return restart_together(nemesis, nodes)


def restart_together(nemesis: Nemesis, nodes: list[int]) -> dict[str, Any]:
    """Start stopped nodes at once (a lone voter cannot get ready) and wait for all."""
    down = [n for n in nodes if not nemesis.cluster.alive(n)]
    for n in down:
        nemesis.cluster.spawn(n)
    try:
        nemesis.cluster.wait_ready(down, nemesis.restart_timeout_s)
    except NodeStartError as exc:
        return {"restart_error": str(exc)[-500:]}
    return {}


def _path_text(nemesis: Nemesis, step: FaultStep) -> str:
    if step.params.get("where") == "raft":
        return RAFT_PATH_TEXT
    return f"/{nemesis.topic}-{int(step.params['partition'])}/"


class DiskFault:
    """EIO, ENOSPC or slow fsyncs on the target until the heal."""

    def apply(self, nemesis: Nemesis, step: FaultStep, node: int) -> dict[str, Any]:
        if step.kind == "disk-slow":
            order: dict[str, Any] = {"slow_fsync_ms": int(step.params["slow_fsync_ms"])}
        elif step.kind == "disk-full":
            order = {"enospc": _path_text(nemesis, step)}
        else:
            order = {f"eio_{step.params['op']}": _path_text(nemesis, step)}
        send_order(nemesis, node, order)
        return {"order": order}

    def heal(self, nemesis: Nemesis, active: Active) -> dict[str, Any]:
        if nemesis.cluster.alive(active.node):
            send_order(nemesis, active.node, {})
            return {"stopped": False}
        control = Path(nemesis.cluster.plan.node(active.node).work_dir) / CONTROL_FILE
        control.unlink(missing_ok=True)
        status = nemesis.cluster.stop(active.node)  # reap it: its exit status
        return {"stopped": True, "status": status, **nemesis.restart(active.node)}


INJECTORS: dict[str, Any] = {
    "power-cut": PowerCut(),
    "power-cut-all": PowerCutAll(),
    "disk-slow": DiskFault(),
    "disk-eio": DiskFault(),
    "disk-full": DiskFault(),
}
