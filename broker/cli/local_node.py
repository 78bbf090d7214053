"""Start a throwaway local node as a subprocess (for ``rillet demo`` and bench/ scripts).

The node runs with its own data directory on 127.0.0.1 and an ephemeral port; the context
manager always stops it (SIGTERM, then SIGKILL after a grace period), even on errors.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

READY_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 15.0


@contextlib.contextmanager
def local_node(data_dir: Path | None = None, config_text: str | None = None) -> Iterator[str]:
    """Yield the bootstrap address of a freshly started node; stop it on exit."""
    with tempfile.TemporaryDirectory(prefix="rillet-") as tmp:
        work = Path(tmp)
        ready = work / "ready.json"
        args = [
            sys.executable,
            "-m",
            "rillet.broker.cli.main",
            "--log-level",
            "WARNING",
            "node",
            "--data-dir",
            str(data_dir or work / "data"),
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--ready-file",
            str(ready),
        ]
        if config_text is not None:
            (work / "node.toml").write_text(config_text)
            args += ["--config", str(work / "node.toml")]
        with open(work / "node.log", "wb") as log_file:
            proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=log_file)
        try:
            deadline = time.monotonic() + READY_TIMEOUT_S
            while not ready.exists():
                if proc.poll() is not None:
                    raise RuntimeError(
                        f"node exited with {proc.returncode}:\n{(work / 'node.log').read_text()}"
                    )
                if time.monotonic() > deadline:
                    raise TimeoutError(f"node not ready within {READY_TIMEOUT_S}s")
                time.sleep(0.02)
            port = json.loads(ready.read_text())["port"]
            yield f"127.0.0.1:{port}"
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
