"""A node with a fault-injecting file layer under its stores: the chaos harness's test mode.

Run as ``python -m rillet.cli.faulty_node --control FILE [--broken NAME] -- <rillet.cli.main
arguments>`` (``--broken``: a deliberately broken node, ``cli/broken_variants.py``)
(the harness does, for runs with the ``power-cut*`` and ``disk-*`` fault kinds; this is a
test entry point, never a way to run a production node). It installs
:class:`~rillet.chaos.lazy_disk.LazyDisk` over the node's ``--data-dir`` and then runs the
node as ``rillet node`` would. On ``SIGUSR2`` it reads ``FILE`` (JSON): ``{"power_cut":
true}`` drops every write not yet fsynced and ends the process with status 99; otherwise the
object gives the disk faults in force from now on (``{}`` heals them), see
:class:`~rillet.chaos.lazy_disk.DiskFaults`.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from rillet.chaos.lazy_disk import DiskFaults, LazyDisk
from rillet.cli import broken_variants
from rillet.wire import disk_io

CONTROL_SIGNAL = signal.SIGUSR2


def _data_dir(argv: list[str]) -> Path:
    try:
        return Path(argv[argv.index("--data-dir") + 1])
    except (ValueError, IndexError):
        raise SystemExit("faulty_node: the node arguments name no --data-dir") from None


def main() -> int:
    args = sys.argv[1:]
    broken = ""
    if args[2:4] and args[2] == "--broken":
        broken = args[3]
        del args[2:4]
    if len(args) < 3 or args[0] != "--control" or args[2] != "--":
        raise SystemExit(
            "usage: python -m rillet.cli.faulty_node --control FILE [--broken NAME] -- ARGS"
        )
    control = Path(args[1])
    node_argv = args[3:]
    if broken:
        broken_variants.apply(broken)
    data_dir = _data_dir(node_argv)
    data_dir.mkdir(parents=True, exist_ok=True)
    disk = LazyDisk(data_dir, data_dir.parent / "lazy-disk-graveyard")
    disk_io.install(disk)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        try:
            order = json.loads(control.read_text())
        except (OSError, ValueError) as exc:
            print(f"faulty_node: unreadable control file: {exc}", file=sys.stderr, flush=True)
            return
        if order.get("power_cut"):
            # Not here: the main thread may be inside the layer (see LazyDisk.power_cut).
            threading.Thread(target=disk.power_cut, daemon=True).start()
        else:
            disk.faults = DiskFaults.from_dict(order)
            print(f"faulty_node: disk faults now {disk.faults}", file=sys.stderr, flush=True)

    signal.signal(CONTROL_SIGNAL, on_signal)
    from rillet.cli.main import main as node_main

    try:
        return node_main(node_argv)
    finally:
        # The node has stopped; the interpreter's exit would put back the default action,
        # which ends the process on a late order (a heal) with no status of its own.
        signal.signal(CONTROL_SIGNAL, signal.SIG_IGN)


if __name__ == "__main__":
    sys.exit(main())
