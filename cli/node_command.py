"""``rillet node``: run one node in the foreground.

What keeps a node from starting is nearly always the operator's to fix (a bad setting, a port
another process holds, a data directory it may not write): each is one line on stderr and
exit status 2, the traceback only with ``--log-level DEBUG``.

The node process runs with umask 077: its data (the Raft log carries users' SCRAM salts and
keys) is readable by the account that runs it alone.
"""

from __future__ import annotations

import argparse
import errno
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from rillet.broker.config import NodeConfig, load_config
from rillet.broker.errors import BrokerError
from rillet.launcher.private_files import PRIVATE_UMASK
from rillet.partition_store.errors import StoreError
from rillet.raft.durable_log import StorageError as RaftStorageError

log = logging.getLogger(__name__)

EXIT_START_FAILED = 2


def register(sub: Any) -> None:
    p = sub.add_parser("node", help="run a node in the foreground")
    p.add_argument("--config", type=Path, help="TOML config file (all keys optional)")
    p.add_argument("--data-dir", help="overrides data_dir")
    p.add_argument("--host", help="overrides listener.host")
    p.add_argument("--port", type=int, help="overrides listener.port (0 = ephemeral)")
    p.add_argument("--node-id", type=int, help="overrides node_id")
    p.add_argument(
        "--ready-file",
        type=Path,
        help="write {event, node_id, host, port, pid, kafka_port, http_port} as JSON once serving",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace, make_node: Callable[..., Any] | None = None) -> int:
    """``make_node(config, ready_file)``: the node to run (a test's entry point builds one
    with faults injected: tests/support/ack_before_hw_node.py)."""
    # Imported here: the node's modules take about a second to import, which every other
    # command (topics, consume, status, ...) would pay at each invocation.
    from rillet.broker.node import Node

    os.umask(PRIVATE_UMASK)  # every file and directory the node makes is 0600 / 0700
    config: NodeConfig | None = None
    code = 0
    try:
        config = load_config(
            args.config,
            {
                "data_dir": args.data_dir,
                "listener.host": args.host,
                "listener.port": args.port,
                "node_id": args.node_id,
            },
        )
        trio.run((make_node or Node)(config, args.ready_file).run)
    except* (BrokerError, StoreError, RaftStorageError) as refused:  # one line each
        for error in leaves(refused):
            log.error("%s", error)
        code = EXIT_START_FAILED
    except* OSError as failed:
        for os_error in leaves(failed):
            assert isinstance(os_error, OSError)
            log.debug("node stopped by an OS error", exc_info=os_error)
            log.error("%s", os_error_line(os_error, config))
        code = EXIT_START_FAILED
    return code


def leaves(group: BaseExceptionGroup[Any]) -> list[BaseException]:
    """The exceptions inside a (possibly nested) group, in order."""
    out: list[BaseException] = []
    for exc in group.exceptions:
        out.extend(leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return out


def os_error_line(exc: OSError, config: NodeConfig | None) -> str:
    """One line for an OS error that stopped the node, naming the settings to look at."""
    if config is None:
        return f"cannot start: {exc}"
    if exc.errno == errno.EADDRINUSE:
        ports = [f"listener.port {config.listener.port}"]
        if config.kafka_listener.enabled:
            ports.append(f"kafka_listener.port {config.kafka_listener.port}")
        if config.quorum.raft_port:
            ports.append(f"quorum.raft_port {config.quorum.raft_port}")
        return f"address already in use: another process holds a port ({', '.join(ports)})"
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"cannot bind listener.host {config.listener.host}: {exc.strerror}"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.ENOTDIR):
        where = f" ({exc.filename})" if exc.filename else ""
        return f"data_dir {config.data_dir} is not usable{where}: {exc.strerror}"
    return f"node stopped: {exc}"
