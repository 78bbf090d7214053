"""``rillet cluster up|status|down``: a local multi-node cluster in one command.

``up`` plans the cluster in ``--data-dir`` (configs, secret, fixed loopback ports) the first
time, starts every node as a background process, waits until a Raft leader exists and every
broker is registered and unfenced, and prints the endpoints. Run again after ``down``, it
restarts the same cluster with its data. ``status`` asks each node for its view of the
quorum (DescribeQuorum); ``down`` stops the nodes with SIGTERM (controlled shutdown) and
keeps the data unless ``--purge``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import ssl
import sys
import time
from pathlib import Path
from typing import Any

from rillet.cli import (
    add_node_command,
    decommission_command,
    features_command,
    rebalance_command,
    voters_command,
)
from rillet.cli.cluster_status import (
    REFUSED,
    Address,
    NodeProbe,
    PartitionHealth,
    best_view,
    no_answer_line,
    partition_health,
    print_brokers_and_partitions,
    print_quorum,
    probe_all,
    raft_view,
    run_remote_status,
)
from rillet.cli.common import (
    BOOTSTRAP_ENV,
    add_tls_options,
    bootstrap_arg,
    client_options,
    positive_int,
    run_async,
)
from rillet.cli.secure_cluster import (
    CLIENT_NAME,
    HTTP_TOKEN_FILE,
    TLS_DIR,
    admin_dir,
    create_admin_user,
    plan_local_cluster,
    plan_ssl_context,
    write_client_configs,
)
from rillet.launcher.local_cluster import (
    CLUSTER_FILE,
    ClusterPlan,
    LocalCluster,
    load_plan,
    running_pids,
)
from rillet.launcher.local_node import STOP_TIMEOUT_S, NodeStartError
from rillet.launcher.private_files import tighten
from rillet.wire.cluster_messages import DescribeQuorumResponse

DEFAULT_DIR = Path("rillet-cluster")


def register(sub: Any) -> None:
    p = sub.add_parser("cluster", help="run a local multi-node cluster in the background")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    up = actions.add_parser("up", help="start (or restart) the cluster and wait until ready")
    up.add_argument("--nodes", type=positive_int, default=3, help="voters to plan (default 3)")
    up.add_argument(
        "--brokers",
        type=int,
        default=0,
        help="broker-only nodes to plan beside the voters, numbered after them (default 0)",
    )
    up.add_argument("--data-dir", type=Path, default=DEFAULT_DIR, help=f"default {DEFAULT_DIR}")
    up.add_argument(
        "--secure",
        action="store_true",
        help="TLS on every listener and link, a local CA, an admin and SASL logins",
    )
    up.set_defaults(run=run_up)
    status = actions.add_parser("status", help="leader, term, voters, brokers, partitions")
    status.add_argument("--data-dir", type=Path, default=DEFAULT_DIR)
    status.add_argument(
        "--bootstrap",
        type=bootstrap_arg,
        help=f"host:port[,host:port] of any cluster's node(s) instead of --data-dir's "
        f"(default: env {BOOTSTRAP_ENV} when --data-dir holds no cluster)",
    )
    add_tls_options(status)  # for --bootstrap: a cluster of --data-dir uses its own files
    status.set_defaults(run=run_status)
    down = actions.add_parser("down", help="stop every node (data is kept unless --purge)")
    down.add_argument("--data-dir", type=Path, default=DEFAULT_DIR)
    down.add_argument("--purge", action="store_true", help="also delete the cluster directory")
    down.set_defaults(run=run_down)
    decommission_command.register(actions)
    voters_command.register(actions)
    add_node_command.register(actions)
    features_command.register(actions)
    rebalance_command.register(actions)


def run_up(args: argparse.Namespace) -> int:
    base: Path = args.data_dir.resolve()
    if (base / CLUSTER_FILE).exists():
        plan = load_plan(base)
        if running_pids(plan):
            if plan.kafka_bootstrap:
                print(f"kafka bootstrap servers: {plan.kafka_bootstrap}")
            print(f"cluster in {base} is already running: {plan.bootstrap}")
            return 0
        if len(plan.nodes) != args.nodes + args.brokers:
            print(f"note: {base} holds a {len(plan.nodes)}-node cluster; restarting it as is")
        if args.secure and plan.tls is None:
            print(
                f"error: the cluster in {base} was made without --secure; "
                "use another --data-dir (or `rillet cluster down --purge` first)",
                file=sys.stderr,
            )
            return 1
        narrowed = tighten(base)  # made by an older version: secrets readable by others
        if narrowed:
            print(f"note: {narrowed} files and directories in {base} were open to other users")
    else:
        base.mkdir(parents=True, exist_ok=True)
        if args.brokers < 0:
            print("error: --brokers must be 0 or more", file=sys.stderr)
            return 1
        plan = plan_local_cluster(base, args.nodes, args.secure, args.brokers)
    cluster = LocalCluster(plan, detach=True)
    started = time.monotonic()
    try:
        cluster.start()
    except NodeStartError as exc:
        print(f"error: {exc}", file=sys.stderr)
        _terminate(running_pids(plan))
        return 1
    print(f"cluster {plan.cluster_id} up in {time.monotonic() - started:.1f}s, data in {base}")
    for n in plan.nodes:
        pid = cluster.pid(n.node_id)
        print(f"  node {n.node_id}: {n.bootstrap} (raft port {n.raft_port}, pid {pid})")
    if plan.metrics_urls:
        print(f"metrics endpoints: {plan.metrics_urls}")
    if plan.tls is not None:
        if run_async(lambda: _admin_user(plan)) != 0:
            return 1
        admin = write_client_configs(plan)
        print(f"TLS on every listener and link; clients trust {plan.tls.cafile}")
        print(
            f"admin (super user; keep it to yourself): {admin_dir(plan)}, "
            f"SASL user {CLIENT_NAME} for Kafka clients"
        )
        print(f"  librdkafka (kcat -F, confluent-kafka): {admin.properties}")
        print(f"  Java clients (--command-config):       {admin.java}")
        print(f"  rillet CLI:                            source {admin.env}")
        print(
            "application users log in as themselves (SASL on both listeners): "
            "`rillet users create NAME --cert` writes their files"
        )
        print(
            f"ACLs on: {CLIENT_NAME} may do everything (rillet acls list), other users "
            "nothing until `rillet acls add` grants it"
        )
        _print_http_token_use(plan)
    if plan.kafka_bootstrap:
        print(f"kafka bootstrap servers: {plan.kafka_bootstrap}")
    print(f"bootstrap servers: {plan.bootstrap}")  # the last line: scripts take it
    return 0


def _print_http_token_use(plan: ClusterPlan) -> None:
    token = Path(plan.base_dir) / TLS_DIR / HTTP_TOKEN_FILE
    if not token.exists() or plan.tls is None or not plan.metrics_urls:
        return  # a cluster made before the endpoints asked for a token
    console = plan.metrics_urls.split(",")[0].removesuffix("metrics")
    print(f"HTTPS endpoints: the console, /api/* and labelled /metrics need the token in {token}")
    print(f'  curl --cacert {plan.tls.cafile} -H "Authorization: Bearer $(cat {token})" ...')
    print(f"  console: {console} (any user name, the token as password)")


async def _admin_user(plan: ClusterPlan) -> int:
    await create_admin_user(plan)
    return 0


def run_status(args: argparse.Namespace) -> int:
    base: Path = args.data_dir.resolve()
    bootstrap: str | None = args.bootstrap
    if bootstrap is None and not (base / CLUSTER_FILE).exists():
        bootstrap = os.environ.get(BOOTSTRAP_ENV)  # a remote cluster, as other commands do
    if bootstrap is not None:
        return run_remote_status(bootstrap, client_options(args))
    if not (base / CLUSTER_FILE).exists():
        print(
            f"error: no cluster in {base} (run `rillet cluster up` first, or give --bootstrap)",
            file=sys.stderr,
        )
        return 1
    plan = load_plan(base)
    tls = plan_ssl_context(plan)
    probes = probe_nodes([(n.node_id, n.port) for n in plan.nodes], tls)
    alive = running_pids(plan)
    answered = [p.view for p in probes.values() if p.view is not None]
    if not answered:
        print(no_answer_line(probes, alive))
        return 1
    best = best_view(answered)
    health = _health(plan.bootstrap, tls)
    print_quorum(best, plan.cluster_id)
    print("node  listener          process  raft view")
    for n in plan.nodes:
        proc = f"pid {alive[n.node_id]}" if n.node_id in alive else "stopped"
        print(f"{n.node_id:<5} {n.bootstrap:<17} {proc:<8} {raft_view(probes.get(n.node_id))}")
    print_brokers_and_partitions(best, health)
    return 0


def _health(bootstrap: str, tls: ssl.SSLContext | None) -> PartitionHealth | None:
    found: list[PartitionHealth] = []

    async def main() -> int:
        answer = await partition_health(bootstrap, ssl_context=tls)
        if answer is not None:
            found.append(answer[1])
        return 0

    run_async(main)
    return found[0] if found else None


def probe_nodes(
    targets: list[tuple[int, int]],
    tls: ssl.SSLContext | None = None,
    state_digest: bool = False,
) -> dict[int, NodeProbe]:
    """Each local node's DescribeQuorum answer (or why none came), by node id."""
    found: dict[Address, NodeProbe] = {}

    async def main() -> int:
        addresses = [("127.0.0.1", port) for _, port in targets]
        found.update(await probe_all(addresses, ssl_context=tls, state_digest=state_digest))
        return 0

    run_async(main)
    return {nid: found.get(("127.0.0.1", port), NodeProbe(None, REFUSED)) for nid, port in targets}


def describe_nodes(
    targets: list[tuple[int, int]], state_digest: bool = False
) -> dict[int, DescribeQuorumResponse | None]:
    """Each node's DescribeQuorum answer by node id (None when it did not answer)."""
    return {nid: p.view for nid, p in probe_nodes(targets, state_digest=state_digest).items()}


def run_down(args: argparse.Namespace) -> int:
    base: Path = args.data_dir.resolve()
    if not (base / CLUSTER_FILE).exists():
        print(f"no cluster in {base}")
        return 0
    plan = load_plan(base)
    pids = running_pids(plan)
    _terminate(pids)
    print(f"stopped {len(pids)} node(s)" + ("" if pids else ": none was running"))
    if args.purge:
        shutil.rmtree(base)
        print(f"removed {base}")
    return 0


def _terminate(pids: dict[int, int]) -> None:
    """SIGTERM every node (they hand over leadership), SIGKILL whatever overstays."""
    for pid in pids.values():
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while time.monotonic() < deadline and any(_exists(p) for p in pids.values()):
        time.sleep(0.05)
    for pid in pids.values():
        if _exists(pid):
            _signal(pid, signal.SIGKILL)


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A detached node is not our child, but a zombie child of ours would still "exist".
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.split(")")[-1].split()[0] != "Z"
