"""``rillet cluster add-voter ID`` and ``remove-voter ID``: change the Raft voter set.

One voter at a time (the engine refuses a second change while one is under way). Adding
catches the node up first, then commits the configuration that makes it a voter; the
command returns when that is committed. Against the local cluster of ``--data-dir`` the
node's Raft and listener addresses come from the cluster's plan; against any cluster
(``--bootstrap``) give them with ``--raft`` and ``--listener``. The node's directory id
(KIP-853) is asked from the node itself unless ``--directory-id`` names it.
"""

from __future__ import annotations

import argparse
import os
import ssl
import sys
from pathlib import Path
from typing import Any

import trio

from rillet.cli.cluster_status import probe
from rillet.cli.common import (
    BOOTSTRAP_ENV,
    add_tls_options,
    bootstrap_arg,
    client_options,
    positive_int,
    run_async,
)
from rillet.cli.secure_cluster import plan_ssl_context
from rillet.client.cluster import parse_bootstrap
from rillet.client.connection import BrokerConnection
from rillet.client.errors import RilletError
from rillet.client.sasl import SaslLogin
from rillet.launcher.local_cluster import CLUSTER_FILE, load_plan
from rillet.wire.error_codes import ErrorCode
from rillet.wire.raft_voter_messages import AddRaftVoterRequest, RemoveRaftVoterRequest

DEFAULT_DIR = Path("rillet-cluster")
# Catching a voter up can take a while on a long metadata log (the node's own limit is
# quorum.voter_catch_up_timeout_ms); the command waits a little longer than that.
REQUEST_TIMEOUT_S = 90.0


def register(actions: Any) -> None:
    add = actions.add_parser("add-voter", help="make a node a Raft voter (it catches up first)")
    add.add_argument("node", type=positive_int, metavar="ID", help="the node's id")
    add.add_argument("--raft", help="host:port of the node's Raft port (with --bootstrap)")
    add.add_argument("--listener", help="host:port of the node's listener (with --bootstrap)")
    add.add_argument("--directory-id", help="the node's Raft directory id (default: ask it)")
    _common(add)
    add.set_defaults(run=run_add_voter)
    remove = actions.add_parser("remove-voter", help="remove a Raft voter")
    remove.add_argument("node", type=positive_int, metavar="ID", help="the voter's node id")
    remove.add_argument("--directory-id", default="", help="only this directory of the voter")
    _common(remove)
    remove.set_defaults(run=run_remove_voter)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DIR)
    parser.add_argument(
        "--bootstrap",
        type=bootstrap_arg,
        help=f"host:port of any node of any cluster instead of --data-dir's "
        f"(default: env {BOOTSTRAP_ENV} when --data-dir holds no cluster)",
    )
    add_tls_options(parser)


class _Target:
    """Where requests go and with which TLS/SASL; the local plan's addresses if any."""

    def __init__(self, args: argparse.Namespace) -> None:
        base: Path = args.data_dir.resolve()
        self.bootstrap: str | None = args.bootstrap
        self.nodes: dict[int, tuple[str, str]] = {}  # node id -> (raft, listener)
        security = client_options(args)
        self.tls: ssl.SSLContext | None = security.get("ssl_context")
        self.sasl: SaslLogin | None = security.get("sasl")
        if self.bootstrap is None and (base / CLUSTER_FILE).exists():
            plan = load_plan(base)
            self.bootstrap = plan.bootstrap
            self.tls = plan_ssl_context(plan)
            self.nodes = {n.node_id: (f"{n.host}:{n.raft_port}", n.bootstrap) for n in plan.nodes}
        if self.bootstrap is None:
            self.bootstrap = os.environ.get(BOOTSTRAP_ENV)

    async def send(self, request: Any) -> tuple[int, str | None]:
        """Send to the first bootstrap node that answers (it forwards to the leader)."""
        assert self.bootstrap is not None
        last = "no node answered"
        for host, port in parse_bootstrap(self.bootstrap):
            async with trio.open_nursery() as nursery:
                conn = BrokerConnection(
                    host, port, client_id="rillet-voters", ssl_context=self.tls, sasl=self.sasl
                )
                try:
                    await conn.connect(nursery, 5.0)
                    response = await conn.request(request, REQUEST_TIMEOUT_S)
                    return response.error_code, response.error_message
                except RilletError as exc:
                    last = f"{host}:{port}: {exc}"
                finally:
                    conn.close()
        return int(ErrorCode.NETWORK_EXCEPTION), last


def made_by_a_lost_attempt(code: int, was_voter: bool | None, removing: bool) -> bool:
    """Whether a refusal says our own change is already made: ``remove-voter`` answered
    VOTER_NOT_FOUND for a node that was a voter when the command began, or ``add-voter``
    DUPLICATE_VOTER for one that was not. A request can reach the leader twice: when the
    leader removes itself it hands leadership over at the commit, and a request whose answer
    was lost on the way (sent again to the next bootstrap node, or forwarded again by a node
    that saw the leader change) is then refused by the new leader as already done.
    ``was_voter`` None: the voters were not known, so a refusal stays one."""
    if was_voter is None:
        return False
    if removing:
        return code == ErrorCode.VOTER_NOT_FOUND and was_voter
    return code == ErrorCode.DUPLICATE_VOTER and not was_voter


async def _was_voter(target: _Target, node: int) -> bool | None:
    """Whether ``node`` is a voter as the first bootstrap node that answers sees it."""
    assert target.bootstrap is not None
    for host, port in parse_bootstrap(target.bootstrap):
        answer = await probe(host, port, ssl_context=target.tls, sasl=target.sasl)
        if answer.view is not None:
            return node in answer.view.voters
    return None


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 1


def run_add_voter(args: argparse.Namespace) -> int:
    return run_async(lambda: _add(args))


def run_remove_voter(args: argparse.Namespace) -> int:
    return run_async(lambda: _remove(args))


async def _add(args: argparse.Namespace) -> int:
    target = _Target(args)
    node = int(args.node)
    if target.bootstrap is None:
        return _fail(f"no cluster in {args.data_dir} (give --bootstrap)")
    raft, listener = target.nodes.get(node, (args.raft, args.listener))
    raft, listener = args.raft or raft, args.listener or listener
    if not raft or not listener:
        return _fail(f"node {node} is not in the local cluster: give --raft and --listener")
    directory = args.directory_id
    if not directory:
        host, _, port = listener.rpartition(":")
        answer = await probe(host, int(port), ssl_context=target.tls, sasl=target.sasl)
        if answer.view is None or not answer.view.directory_id:
            return _fail(f"node {node} at {listener} did not tell its directory id ({answer})")
        directory = answer.view.directory_id
    was_voter = await _was_voter(target, node)
    code, message = await target.send(AddRaftVoterRequest(node, directory, raft, listener))
    if code != ErrorCode.NONE and not made_by_a_lost_attempt(code, was_voter, removing=False):
        return _fail(f"node {node} not added: {ErrorCode.from_wire(code).name}: {message}")
    print(f"node {node} is a voter (directory {directory})")
    return 0


async def _remove(args: argparse.Namespace) -> int:
    target = _Target(args)
    node = int(args.node)
    if target.bootstrap is None:
        return _fail(f"no cluster in {args.data_dir} (give --bootstrap)")
    was_voter = await _was_voter(target, node)
    code, message = await target.send(RemoveRaftVoterRequest(node, args.directory_id))
    if code != ErrorCode.NONE and not made_by_a_lost_attempt(code, was_voter, removing=True):
        return _fail(f"node {node} not removed: {ErrorCode.from_wire(code).name}: {message}")
    print(f"node {node} is no longer a voter")
    return 0
