"""A cluster of local nodes on 127.0.0.1: ``rillet cluster up``, the demo, the pytest plugin
and the integration tests all start clusters through this one module.

``plan_cluster`` writes everything a cluster needs into one directory (mode 0700, as is each
node's): a random cluster secret (mode 0600), one TOML config per node naming all voters
with fixed ports, and ``cluster.json`` describing the nodes. ``LocalCluster`` starts, stops,
kills and restarts node processes from that directory; restarts keep ports and data, so a
stopped cluster comes back with its metadata and logs. Standard library only, and no trio.
"""

from __future__ import annotations

import json
import secrets
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from rillet.launcher.local_node import (
    READY_POLL_S,
    STOP_TIMEOUT_S,
    NodeStartError,
    node_command,
)
from rillet.launcher.private_files import private_dir, write_private

CLUSTER_FILE = "cluster.json"
SECRET_FILE = "cluster.secret"
READY_TIMEOUT_S = 60.0
HOST = "127.0.0.1"


@dataclass(frozen=True, slots=True)
class NodePlan:
    node_id: int
    port: int
    raft_port: int
    work_dir: str
    host: str = HOST  # the node's own address (its listener, its Raft port)
    kafka_port: int = -1  # the Kafka-protocol listener; -1: none
    http_port: int = -1  # the HTTP endpoint (/metrics, /health, /ready, console); -1: none

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def kafka_bootstrap(self) -> str:
        return f"{self.host}:{self.kafka_port}"

    @property
    def metrics_url(self) -> str:
        return self.http_url("/metrics")

    def http_url(self, path: str, tls: bool = False) -> str:
        return f"{'https' if tls else 'http'}://{self.host}:{self.http_port}{path}"


@dataclass(frozen=True, slots=True)
class TlsPlan:
    """PEM files of a cluster with TLS on every link: the CA, the certificate every node
    presents (naming the hosts the nodes are reached at) and a client certificate (the
    nodes require one: mutual TLS)."""

    cafile: str
    node_certfile: str
    node_keyfile: str
    client_certfile: str
    client_keyfile: str
    client_auth: str = "required"  # none: clients need no certificate (SASL, say)

    def node_table(self) -> str:
        return (
            f'[tls]\ncertfile = "{self.node_certfile}"\nkeyfile = "{self.node_keyfile}"\n'
            f'cafile = "{self.cafile}"\nclient_auth = "{self.client_auth}"\n\n'
        )


@dataclass(frozen=True, slots=True)
class ClusterPlan:
    base_dir: str
    cluster_id: str
    nodes: list[NodePlan]
    tls: TlsPlan | None = None

    @property
    def bootstrap(self) -> str:
        return ",".join(n.bootstrap for n in self.nodes)

    @property
    def kafka_bootstrap(self) -> str:
        """Kafka clients' bootstrap.servers ("" when the nodes run no Kafka listener)."""
        return ",".join(n.kafka_bootstrap for n in self.nodes if n.kafka_port >= 0)

    @property
    def metrics_urls(self) -> str:
        """Every node's /metrics address ("" when the nodes run no HTTP endpoint)."""
        tls = self.tls is not None  # the HTTP endpoint follows [tls]: HTTPS
        return ",".join(n.http_url("/metrics", tls) for n in self.nodes if n.http_port >= 0)

    def node(self, node_id: int) -> NodePlan:
        return next(n for n in self.nodes if n.node_id == node_id)


# (src node, dst node, "raft" | "listener", dst's real port) -> the port src dials.
Route = Callable[[int, int, str, int], int]
# (node id, the node's argv) -> the argv that runs it (e.g. inside a network namespace).
Wrap = Callable[[int, list[str]], list[str]]


def plan_cluster(
    base_dir: Path,
    nodes: int = 3,
    extra_config: str = "",
    broker_only: int = 0,
    route: Route | None = None,
    hosts: Sequence[str] | None = None,
    kafka: bool = True,
    http: bool = True,
    tls: TlsPlan | None = None,
    kafka_sasl: str = "",
    super_users: str | None = None,
    native_sasl: str = "",
    http_token_file: str = "",
    http_extra: str = "",
    default_replication_factor: int = 1,
    auto_create_topics: bool = True,
    num_partitions: int = 1,
) -> ClusterPlan:
    """Write configs for ``nodes`` voters (each also a broker) and ``broker_only`` further
    brokers that follow the voters' metadata log, all on free loopback ports.

    ``extra_config`` is appended inside the ``[quorum]`` table (timeouts for tests).
    ``route``, when given, says which port each node dials to reach another voter's Raft
    port and listener (the chaos harness puts a proxy on every link); a node's own entry
    always names its real ports. ``hosts``, when given, puts each node on its own address
    (one per node, in order), configured like a cluster on separate machines: the listener
    on every interface, advertising that address, and Raft bound to it. ``kafka`` gives
    every node a Kafka-protocol listener, ``http`` an HTTP endpoint (metrics, probes,
    console). ``tls`` puts every listener and link of every node on TLS; ``kafka_sasl``
    names the SASL mechanisms Kafka clients must authenticate with. ``super_users`` (a
    semicolon-separated list of principals, possibly empty) turns the ACL authorizer on;
    ``native_sasl`` names the SASL mechanisms rillet's clients must log in with (unless
    they present a client certificate). ``http_token_file`` names the file of the token the
    HTTP endpoints ask for (the API, the console, labelled metrics); ``http_extra`` is
    appended inside every ``[http]`` table (the console's sampling interval for tests).
    ``default_replication_factor``: the replicas of a topic created without saying (Kafka's
    default.replication.factor), auto-created too; ``auto_create_topics``: Kafka's
    auto.create.topics.enable (on, as in Kafka); ``num_partitions``: Kafka's num.partitions,
    the partitions of such topics.
    """
    private_dir(base_dir)
    secret_path = write_private(base_dir / SECRET_FILE, secrets.token_urlsafe(32) + "\n")
    total = nodes + broker_only
    ports = _free_ports(4 * total)
    plans = [
        NodePlan(
            i + 1,
            ports[4 * i],
            ports[4 * i + 1],
            str(base_dir / f"node{i + 1}"),
            kafka_port=ports[4 * i + 2] if kafka else -1,
            http_port=ports[4 * i + 3] if http else -1,
        )
        for i in range(total)
    ]
    if hosts is not None:
        if len(hosts) != total:
            raise ValueError(f"{len(hosts)} hosts for {total} nodes")
        plans = [replace(n, host=h) for n, h in zip(plans, hosts, strict=True)]
    cluster_id = f"rillet-{secrets.token_hex(4)}"

    def dial(src: int, dst: NodePlan, kind: str, port: int) -> int:
        return port if route is None or src == dst.node_id else route(src, dst.node_id, kind, port)

    for n in plans:
        voters = ",\n".join(
            f"  {{ id = {v.node_id}, "
            f'raft = "{v.host}:{dial(n.node_id, v, "raft", v.raft_port)}", '
            f'listener = "{v.host}:{dial(n.node_id, v, "listener", v.port)}" }}'
            for v in plans[:nodes]
        )
        work = private_dir(Path(n.work_dir))
        kafka_table = (
            f'[kafka_listener]\nenabled = true\nhost = "{n.host}"\nport = {n.kafka_port}\n'
            f'sasl_mechanisms = "{kafka_sasl}"\n\n'
            if n.kafka_port >= 0
            else ""
        )
        http_table = (
            f'[http]\nenabled = true\nhost = "{n.host}"\nport = {n.http_port}\n'
            + (f'auth_token_file = "{http_token_file}"\n' if http_token_file else "")
            + http_extra
            + "\n"
            if n.http_port >= 0
            else ""
        )
        (work / "node.toml").write_text(
            f'node_id = {n.node_id}\ncluster_id = "{cluster_id}"\n'
            f'data_dir = "{work / "data"}"\n\n'
            f"[listener]\n{_listener_host(n)}port = {n.port}\n"
            f'sasl_mechanisms = "{native_sasl}"\n\n'
            + kafka_table
            + http_table
            + f"[topics]\ndefault_replication_factor = {default_replication_factor}\n"
            f"num_partitions = {num_partitions}\n"
            f"auto_create_topics_enable = {str(auto_create_topics).lower()}\n\n"
            + (tls.node_table() if tls is not None else "")
            + (
                f'[authorizer]\nenabled = true\nsuper_users = "{super_users}"\n\n'
                if super_users is not None
                else ""
            )
            + f'[quorum]\nsecret_file = "{secret_path}"\nraft_host = "{n.host}"\n'
            f"voters = [\n{voters},\n]\n" + extra_config
        )
    plan = ClusterPlan(str(base_dir), cluster_id, plans, tls)
    (base_dir / CLUSTER_FILE).write_text(json.dumps(asdict(plan), indent=2) + "\n")
    return plan


def _listener_host(n: NodePlan) -> str:
    if n.host == HOST:
        return f'host = "{HOST}"\n'
    return f'host = "0.0.0.0"\nadvertised_host = "{n.host}"\n'


def load_plan(base_dir: Path) -> ClusterPlan:
    raw: dict[str, Any] = json.loads((base_dir / CLUSTER_FILE).read_text())
    tls = raw.get("tls")
    return ClusterPlan(
        raw["base_dir"],
        raw["cluster_id"],
        [NodePlan(**n) for n in raw["nodes"]],
        TlsPlan(**tls) if tls else None,
    )


class LocalCluster:
    """Node processes of one planned cluster. Use as a context manager to always stop them."""

    def __init__(
        self,
        plan: ClusterPlan,
        log_level: str = "INFO",
        detach: bool = False,
        wrap: Wrap | None = None,
    ) -> None:
        """``wrap``, when given, turns each node's argv into the one that runs it (the
        chaos harness runs each node in a network namespace of its own this way)."""
        self.plan = plan
        self._log_level = log_level
        self._detach = detach
        self._wrap = wrap
        self._procs: dict[int, subprocess.Popen[bytes]] = {}
        self._starts: dict[int, int] = {}

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill_all()

    @property
    def bootstrap(self) -> str:
        return self.plan.bootstrap

    # -- processes ------------------------------------------------------------------------

    def _ready_file(self, node_id: int) -> Path:
        return Path(self.plan.node(node_id).work_dir) / "ready.json"

    def log_path(self, node_id: int) -> Path:
        return Path(self.plan.node(node_id).work_dir) / "node.log"

    def spawn(self, node_id: int) -> None:
        """Start one node without waiting (a lone voter cannot be ready without its peers)."""
        if self.alive(node_id):
            raise NodeStartError(f"node {node_id} is already running")
        n = self.plan.node(node_id)
        work = Path(n.work_dir)
        ready = self._ready_file(node_id)
        ready.unlink(missing_ok=True)
        argv = node_command(
            work / "data",
            ready,
            work / "node.toml",
            [],
            port=None,
            host=None,  # the config names the listener host
            log_level=self._log_level,
        )
        if self._wrap is not None:
            argv = self._wrap(node_id, argv)
        self._starts[node_id] = self._starts.get(node_id, 0) + 1
        with open(self.log_path(node_id), "ab") as log_file:
            self._procs[node_id] = subprocess.Popen(
                argv,
                stdout=subprocess.DEVNULL,
                stderr=log_file,
                stdin=subprocess.DEVNULL,
                start_new_session=self._detach,
            )
        (work / "pid").write_text(str(self._procs[node_id].pid))

    def wait_ready(self, node_ids: Iterable[int], timeout_s: float = READY_TIMEOUT_S) -> None:
        """Poll the nodes' ready files until all exist; raise (with log tails) otherwise."""
        deadline = time.monotonic() + timeout_s
        waiting = set(node_ids)
        while waiting:
            for node_id in sorted(waiting):
                proc = self._procs[node_id]
                if self._ready_file(node_id).exists():
                    waiting.discard(node_id)
                elif proc.poll() is not None:
                    raise NodeStartError(
                        f"node {node_id} exited with status {proc.returncode}:\n"
                        + self.log_tail(node_id)
                    )
            if waiting and time.monotonic() >= deadline:
                tails = "\n".join(f"--- node {i}\n{self.log_tail(i)}" for i in sorted(waiting))
                raise NodeStartError(
                    f"nodes {sorted(waiting)} not ready in {timeout_s:g}s\n{tails}"
                )
            if waiting:
                time.sleep(READY_POLL_S)

    def start(
        self, node_ids: Sequence[int] | None = None, timeout_s: float = READY_TIMEOUT_S
    ) -> None:
        ids = list(node_ids) if node_ids is not None else [n.node_id for n in self.plan.nodes]
        try:
            for node_id in ids:
                self.spawn(node_id)
            self.wait_ready(ids, timeout_s)
        except BaseException:
            if not self._detach:
                self.kill_all()
            raise

    def alive(self, node_id: int) -> bool:
        proc = self._procs.get(node_id)
        return proc is not None and proc.poll() is None

    def pid(self, node_id: int) -> int:
        return self._procs[node_id].pid

    def signal(self, node_id: int, signum: int) -> None:
        if self.alive(node_id):
            self._procs[node_id].send_signal(signum)

    def kill(self, node_id: int) -> None:
        """SIGKILL: no controlled shutdown; the restart recovers from disk."""
        proc = self._procs.get(node_id)
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(STOP_TIMEOUT_S)

    def stop(self, node_id: int, timeout_s: float = STOP_TIMEOUT_S) -> int | None:
        """SIGTERM (controlled shutdown), SIGKILL if it overstays."""
        proc = self._procs.get(node_id)
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout_s)
        return proc.returncode

    def stop_all(self) -> None:
        for node_id in list(self._procs):
            self.signal(node_id, signal.SIGTERM)
        for node_id in list(self._procs):
            self.stop(node_id)

    def kill_all(self) -> None:
        for node_id in list(self._procs):
            self.kill(node_id)

    def log_tail(self, node_id: int, lines: int = 30) -> str:
        try:
            text = self.log_path(node_id).read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def running_pids(plan: ClusterPlan) -> dict[int, int]:
    """Pids of the plan's nodes that still run (from their pid files): for ``cluster down``."""
    out: dict[int, int] = {}
    for n in plan.nodes:
        try:
            pid = int((Path(n.work_dir) / "pid").read_text())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        if b"rillet" in cmdline and str(Path(n.work_dir)).encode() in cmdline:
            out[n.node_id] = pid
    return out


def _free_ports(count: int) -> list[int]:
    socks = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind((HOST, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()
