"""Start throwaway local nodes as subprocesses (``rillet demo``, bench/ scripts, pytest plugin).

One place knows how to launch ``rillet node`` on 127.0.0.1 with an ephemeral port, wait for
its ready file and stop it, so the demo, the benchmarks and the test plugin cannot drift
apart. ``start_node`` starts one node and is the building block for a multi-node cluster
later; ``local_node`` is the context manager most callers want: it always stops the node
(SIGTERM, then SIGKILL after a grace period), whatever happens in its block.

Standard library only, and no trio: it runs before and after ``trio.run``.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

READY_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 15.0
READY_POLL_S = 0.02  # the node announces readiness by renaming a file into place
LOG_TAIL_LINES = 30


class NodeStartError(RuntimeError):
    """The node exited or did not become ready in time (the message has its log's tail)."""


@dataclass(frozen=True, slots=True)
class LocalNode:
    """A running node process and where to reach it."""

    proc: subprocess.Popen[bytes]
    host: str
    port: int
    data_dir: Path
    log_path: Path

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> int | None:
        """SIGTERM (a clean shutdown), SIGKILL if it overstays; returns the exit status."""
        return _stop(self.proc, timeout_s)


def node_command(
    data_dir: Path,
    ready_file: Path,
    config_file: Path | None,
    extra_args: Sequence[str],
    *,
    port: int | None = 0,
    host: str | None = "127.0.0.1",
    log_level: str = "WARNING",
) -> list[str]:
    """The argv that runs a node with this interpreter (so it finds this rillet install).

    ``port`` None keeps the config file's listener port (cluster nodes have fixed ports);
    ``host`` None keeps the config file's listener host.
    """
    args = [
        sys.executable,
        "-m",
        "rillet.cli.main",
        "--log-level",
        log_level,
        "node",
        "--data-dir",
        str(data_dir),
        "--ready-file",
        str(ready_file),
    ]
    if host is not None:
        args += ["--host", host]
    if port is not None:
        args += ["--port", str(port)]
    if config_file is not None:
        args += ["--config", str(config_file)]
    return args + list(extra_args)


def start_node(
    work_dir: Path,
    *,
    data_dir: Path | None = None,
    config_text: str | None = None,
    extra_args: Sequence[str] = (),
    ready_timeout_s: float = READY_TIMEOUT_S,
) -> LocalNode:
    """Start one node whose files (ready file, log, config, default data dir) live in work_dir.

    Returns once the node serves; raises NodeStartError (after stopping it) otherwise.
    """
    work_dir.mkdir(parents=True, exist_ok=True)
    ready = work_dir / "ready.json"
    ready.unlink(missing_ok=True)
    log_path = work_dir / "node.log"
    data_dir = data_dir if data_dir is not None else work_dir / "data"
    config_file = None
    if config_text is not None:
        config_file = work_dir / "node.toml"
        config_file.write_text(config_text)
    argv = node_command(data_dir, ready, config_file, extra_args)
    with open(log_path, "wb") as log_file:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log_file)
    try:
        port = _wait_ready(proc, ready, ready_timeout_s)
    except BaseException:
        _stop(proc, STOP_TIMEOUT_S)
        raise
    return LocalNode(proc, "127.0.0.1", port, data_dir, log_path)


def _wait_ready(proc: subprocess.Popen[bytes], ready: Path, timeout_s: float) -> int:
    """Poll for the ready file until the deadline (the node's exit ends the wait early);
    returns the port the node announced."""
    deadline = time.monotonic() + timeout_s
    while not ready.exists():
        if proc.poll() is not None:
            raise NodeStartError(
                f"node exited with status {proc.returncode}:\n"
                + _tail(ready.parent / "node.log", LOG_TAIL_LINES)
            )
        if time.monotonic() >= deadline:
            raise NodeStartError(
                f"node not ready within {timeout_s:g}s:\n"
                + _tail(ready.parent / "node.log", LOG_TAIL_LINES)
            )
        time.sleep(READY_POLL_S)
    info: dict[str, Any] = json.loads(ready.read_text())
    return int(info["port"])


def _tail(path: Path, lines: int) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _stop(proc: subprocess.Popen[bytes], timeout_s: float) -> int | None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout_s)
    return proc.returncode


@contextlib.contextmanager
def running_node(
    data_dir: Path | None = None, config_text: str | None = None
) -> Iterator[LocalNode]:
    """A node in a temporary work directory, stopped (and the directory removed) on exit.

    With ``data_dir`` the data outlives the node; otherwise it is removed with the rest.
    """
    with tempfile.TemporaryDirectory(prefix="rillet-") as tmp:
        node = start_node(Path(tmp), data_dir=data_dir, config_text=config_text)
        try:
            yield node
        finally:
            node.stop()


@contextlib.contextmanager
def local_node(data_dir: Path | None = None, config_text: str | None = None) -> Iterator[str]:
    """Like ``running_node`` but yields just the bootstrap address ("127.0.0.1:PORT")."""
    with running_node(data_dir, config_text) as node:
        yield node.bootstrap
