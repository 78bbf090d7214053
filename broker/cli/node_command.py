"""``rillet node``: run one node in the foreground."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

import trio

from rillet.broker.config import load_config
from rillet.broker.errors import BrokerError
from rillet.broker.node import Node
from rillet.partition_store.errors import StoreError

log = logging.getLogger(__name__)


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


def run(args: argparse.Namespace) -> int:
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
        trio.run(Node(config, args.ready_file).run)
    except (BrokerError, StoreError) as exc:
        log.error("%s", exc)
        return 2
    return 0
