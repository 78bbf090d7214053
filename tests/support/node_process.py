"""Run real ``rillet node`` processes for integration tests.

Each node binds an ephemeral port on 127.0.0.1 and writes a ready file once serving; tests
poll for that file with a deadline (no fixed sleeps). Every process started here is stopped
by the fixture's finaliser, even when the test fails.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

READY_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 15.0


class NodeProcess:
    def __init__(
        self,
        data_dir: Path,
        log_dir: Path,
        extra_args: list[str] | None = None,
        config_text: str | None = None,
        wrapper: list[str] | None = None,
    ) -> None:
        """``wrapper``: a command the node runs under (``prlimit --nofile=N:N``, say)."""
        self.data_dir = data_dir
        self.wrapper = wrapper or []
        self.log_dir = log_dir
        self.extra_args = extra_args or []
        self.config_text = config_text
        self.proc: subprocess.Popen[bytes] | None = None
        self.port: int | None = None
        self.http_port: int | None = None  # when the config enables [http]
        self.starts = 0

    @property
    def bootstrap(self) -> str:
        assert self.port is not None, "node not started"
        return f"127.0.0.1:{self.port}"

    @property
    def kafka_bootstrap(self) -> str:
        """The Kafka-protocol listener's address, when the config enables ``[kafka_listener]``
        (port 0: the one the node announced in its ready file)."""
        ready = json.loads((self.log_dir / f"ready-{self.starts}.json").read_text())
        return f"127.0.0.1:{ready['kafka_port']}"

    def start(self) -> NodeProcess:
        assert self.proc is None or self.proc.poll() is not None, "already running"
        self.starts += 1
        ready = self.log_dir / f"ready-{self.starts}.json"
        ready.unlink(missing_ok=True)
        args = [
            *self.wrapper,
            sys.executable,
            "-m",
            "rillet.cli.main",
            "--log-level",
            "INFO",
            "node",
            "--data-dir",
            str(self.data_dir),
            "--host",
            "127.0.0.1",
            "--ready-file",
            str(ready),
        ]
        if self.config_text is not None:
            cfg = self.log_dir / "node.toml"
            cfg.write_text(self.config_text)
            args += ["--config", str(cfg)]
        if self.port is None:
            args += ["--port", "0"]
        else:
            args += ["--port", str(self.port)]  # restarts keep the address clients know
        args += self.extra_args
        stderr = open(self.log_dir / f"node-{self.starts}.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=stderr)
        stderr.close()
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not ready.exists():
            if self.proc.poll() is not None:
                raise RuntimeError(f"node exited with {self.proc.returncode}: {self.log_tail()}")
            if time.monotonic() > deadline:
                self.kill()
                raise TimeoutError(f"node not ready in {READY_TIMEOUT_S}s: {self.log_tail()}")
            time.sleep(0.02)
        announced = json.loads(ready.read_text())
        self.port = int(announced["port"])
        self.http_port = announced.get("http_port")
        return self

    def kill(self) -> None:
        """SIGKILL: no clean shutdown, the next start must recover from the logs."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(STOP_TIMEOUT_S)

    def terminate(self) -> int:
        """SIGTERM and wait: a graceful shutdown."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.kill()
                raise
        return self.proc.returncode

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, lines: int = 40) -> str:
        logs = sorted(self.log_dir.glob("node-*.log"), key=os.path.getmtime)
        if not logs:
            return ""
        return "\n".join(logs[-1].read_text(errors="replace").splitlines()[-lines:])
