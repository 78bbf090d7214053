"""The node process: the composition root that wires storage, handlers and the listener.

Start-up opens (and recovers) every partition before the port is bound, so a client never
reaches a node whose logs are half-loaded. SIGTERM and SIGINT stop accepting, cancel request
tasks and close every log cleanly (a clean-shutdown marker lets the next start skip full
re-validation). After SIGKILL, the next start recovers from the logs themselves.
"""

from __future__ import annotations

import fcntl
import gc
import json
import logging
import os
import signal
from pathlib import Path
from typing import Any

import trio

from rillet.broker.config import NodeConfig
from rillet.broker.connection import Connection
from rillet.broker.dispatcher import Dispatcher
from rillet.broker.errors import BrokerError
from rillet.broker.handlers.context import BrokerContext
from rillet.broker.replica_manager import ReplicaManager

log = logging.getLogger(__name__)

LOCK_FILE = ".lock"


class DataDirLock:
    """An exclusive flock on the data directory: two nodes must never share one."""

    def __init__(self, data_dir: Path) -> None:
        data_dir.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            raise BrokerError(f"data dir {data_dir} is in use by another node") from None

    def release(self) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)


class Node:
    def __init__(self, config: NodeConfig, ready_file: Path | None = None) -> None:
        self.config = config
        self.ready_file = ready_file
        self.port: int | None = None
        self._connections = 0

    async def run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        cfg = self.config
        lock = DataDirLock(cfg.data_dir)
        manager = ReplicaManager(cfg)
        try:
            manager.open_all()
            listeners = await trio.open_tcp_listeners(cfg.listener.port, host=cfg.listener.host)
            self.port = listeners[0].socket.getsockname()[1]
            ctx = BrokerContext(cfg, manager, self.port)
            dispatcher = Dispatcher(ctx)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._watch_signals, nursery.cancel_scope)
                nursery.start_soon(manager.run_flush_task)
                nursery.start_soon(manager.run_retention_task)
                nursery.start_soon(manager.run_deleted_files_task)
                nursery.start_soon(manager.purge_deleted_dirs)
                await nursery.start(trio.serve_listeners, self._handler_for(dispatcher), listeners)
                # Everything allocated so far (config, open logs, code) lives for the whole
                # run: move it out of the collector's sight so GC pauses stay short.
                gc.collect()
                gc.freeze()
                self._announce_ready()
                task_status.started(self.port)
        finally:
            manager.close_all()
            lock.release()
            log.info("node %d stopped", cfg.node_id)

    def _handler_for(self, dispatcher: Dispatcher) -> Any:
        limits = self.config.limits

        async def handle(stream: trio.SocketStream) -> None:
            if self._connections >= limits.max_connections:
                log.warning("refusing connection: max_connections=%d", limits.max_connections)
                await trio.aclose_forcefully(stream)
                return
            self._connections += 1
            try:
                conn = Connection(
                    stream,
                    dispatcher,
                    limits.max_frame_bytes,
                    limits.max_in_flight_requests_per_connection,
                    limits.receive_buffer_bytes,
                )
                await conn.serve()
            finally:
                self._connections -= 1

        return handle

    def _announce_ready(self) -> None:
        info = {
            "event": "ready",
            "node_id": self.config.node_id,
            "host": self.config.advertised_host,
            "port": self.port,
            "pid": os.getpid(),
        }
        log.info("node %d listening on %s:%d", self.config.node_id, info["host"], self.port)
        if self.ready_file is not None:
            tmp = self.ready_file.with_suffix(".tmp")
            tmp.write_text(json.dumps(info))
            os.replace(tmp, self.ready_file)

    async def _watch_signals(self, scope: trio.CancelScope) -> None:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for signum in signals:
                log.info("received %s, shutting down", signal.Signals(signum).name)
                scope.cancel()
                return
