"""One chaos run from start to verdict, and sweeps over seeds.

``run_once`` plans a fresh cluster in ``<out>/seed-<N>/cluster``, starts it, creates the
workload topic, starts group members, the group sampler and the producers, then drives the
schedule (the nemesis applies and heals each step at its time), heals whatever is left,
stops the producers, waits — each with a deadline — for the cluster to recover and the group
to catch up, stops the members, reads every partition back, summarises every replica's
files, and hands the history and that final state to the checker. Every process it started
is stopped on the way out, also when something fails or the user presses Ctrl-C: the
LocalCluster and MemberProcesses contexts own them, and the threads are bounded joins.

Three networks (``RunConfig.network``): ``proxy`` (the default) puts every node on 127.0.0.1
and every node-to-node link through a user-space proxy, with shortened liveness timeouts so
faults resolve within a window; ``direct`` is the same without the proxies (no network
partitions; the nodes' bytes take no detour through the harness process); ``kernel`` puts
every node in a network namespace of its own on its own address
(``chaos/kernel_network.py``), the harness and its clients in another, and runs the nodes
with the timeouts users run (the defaults).

What a run leaves in its directory: history.jsonl, final.json, summary.json, timeline.png,
the members' files, and (after a violation, or with ``keep_data``) the nodes' data and logs.
"""

from __future__ import annotations

import heapq
import json
import logging
import shutil
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rillet.chaos import probes
from rillet.chaos.checker import Violation, check_all
from rillet.chaos.clock_checks import clock_row_stalls
from rillet.chaos.clock_faults import CLOCK_FAULTS, clock_wrap
from rillet.chaos.errors import ChaosError
from rillet.chaos.final_state import FinalState
from rillet.chaos.history import HISTORY_FILE, HistoryWriter, load_history
from rillet.chaos.kafka_clients import KafkaProducerWorker
from rillet.chaos.kernel_network import KernelNetwork
from rillet.chaos.link_proxy import LinkProxies
from rillet.chaos.members import (
    KAFKA_MEMBER_MODULE,
    NATIVE_MEMBER_MODULE,
    GroupSampler,
    MemberProcesses,
)
from rillet.chaos.nemesis import Nemesis
from rillet.chaos.power_faults import faulty_wrap
from rillet.chaos.replace_voter import voter_set
from rillet.chaos.report import SUMMARY_FILE, TIMELINE_FILE, summarize, write_timeline
from rillet.chaos.schedule import (
    DEFAULT_FAULTS,
    DISK_FAULTS,
    KERNEL_ONLY_FAULTS,
    Schedule,
    Timing,
    build_schedule,
)
from rillet.chaos.settle import collect_final_state
from rillet.chaos.topic_churn import TopicChurn
from rillet.chaos.workload import ProducerOptions, ProducerWorker
from rillet.client import BlockingAdmin, NewTopic
from rillet.launcher.local_cluster import LocalCluster, plan_cluster
from rillet.launcher.local_node import NodeStartError

log = logging.getLogger(__name__)

TOPIC = "chaos"
GROUP = "chaos-group"
START_TIMEOUT_S = 60.0
START_ATTEMPTS = 3
# How a node says a port was taken: its one-line error ("address already in use: another
# process holds a port (...)") or, from older nodes and the OS itself, "Address already in use".
PORT_TAKEN = "address already in use"
_TIMING = Timing()
# How late a step may finish before later steps are shifted (probing a leader takes a moment).
MAX_STEP_LATENESS_S = 0.5
# How long an unwinding run waits for each writer thread (it is a daemon: the process may end).
UNWIND_STOP_S = 5.0
# Node timeouts shortened like the integration tests', so faults resolve within a window.
CLUSTER_CONFIG = (
    'engine = "{engine}"\n'
    "broker_session_timeout_ms = 3000\nbroker_heartbeat_interval_ms = 300\n"
    "\n[replication]\nreplica_lag_time_max_ms = 3000\n"
)
# The kernel network mode runs what users run: only the engine is chosen.
KERNEL_CLUSTER_CONFIG = 'engine = "{engine}"\n'
# Network partitions cut per-link proxies; pysyncobj names its peers by address, so a node
# cannot reach a peer at a proxy's port: only our own engine runs behind them.
ENGINES_WITH_LINKS = ("raft",)
# "direct": loopback without the proxies (no network partitions), so the node-to-node bytes
# take no detour through the harness process: how Kafka's nodes run in the side-by-side
# bench (bench/chaos_side_by_side.py), which has no proxies for them.
NETWORKS = ("proxy", "kernel", "direct")
# Whose clients drive the workload: rillet's own, or Kafka's (confluent-kafka) through the
# nodes' Kafka listeners.
CLIENTS = ("native", "kafka")
NodeWrap = Callable[[int, list[str]], list[str]]  # (node id, argv) -> the argv to run


@dataclass(frozen=True, slots=True)
class RunConfig:
    seed: int = 1
    nodes: int = 3
    engine: str = "raft"  # the metadata quorum engine (quorum.engine)
    duration_s: float = 60.0
    faults: tuple[str, ...] = DEFAULT_FAULTS
    partitions: int = 6
    producers: int = 2
    rate: float = 250.0  # records/s per producer
    members: int = 2
    churn: bool = True  # create and delete topics during the faults
    max_down: int | None = None  # default: a minority of the nodes
    allow_majority: bool = False
    min_insync: int = 2
    windows: tuple[float, float] = (_TIMING.min_window_s, _TIMING.max_window_s)  # fault lengths
    gaps: tuple[float, float] = (_TIMING.min_gap_s, _TIMING.max_gap_s)  # between faults
    out_dir: Path = Path("rillet-chaos")
    keep_data: bool = False
    recovery_timeout_s: float = 90.0
    network: str = "proxy"  # "proxy" (loopback, per-link proxies), "kernel" or "direct"
    client: str = "native"  # "native" (rillet's client) or "kafka" (confluent-kafka)
    flush_ms: int | None = None  # the topic's flush.ms (None: the default, never forced)

    @property
    def replication_factor(self) -> int:
        return min(3, self.nodes)

    def run_dir(self) -> Path:
        return self.out_dir / f"seed-{self.seed}"

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "nodes": self.nodes,
            "engine": self.engine,
            "duration_s": self.duration_s,
            "faults": list(self.faults),
            "partitions": self.partitions,
            "producers": self.producers,
            "rate": self.rate,
            "members": self.members,
            "churn": self.churn,
            "max_down": self.max_down,
            "allow_majority": self.allow_majority,
            "replication_factor": self.replication_factor,
            "min_insync": self.min_insync,
            "windows": list(self.windows),
            "gaps": list(self.gaps),
            "network": self.network,
            "client": self.client,
            "flush_ms": self.flush_ms,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any], out_dir: Path, keep_data: bool = True) -> RunConfig:
        """The configuration a run's summary recorded (for ``rillet chaos check``)."""
        base = cls()
        return cls(
            seed=int(raw["seed"]),
            nodes=int(raw["nodes"]),
            engine=str(raw.get("engine", base.engine)),
            duration_s=float(raw["duration_s"]),
            faults=tuple(raw["faults"]),
            partitions=int(raw.get("partitions", base.partitions)),
            producers=int(raw.get("producers", base.producers)),
            rate=float(raw.get("rate", base.rate)),
            members=int(raw.get("members", base.members)),
            churn=bool(raw.get("churn", base.churn)),
            max_down=raw.get("max_down"),
            allow_majority=bool(raw.get("allow_majority", False)),
            min_insync=int(raw.get("min_insync", base.min_insync)),
            windows=_pair(raw.get("windows", base.windows)),
            gaps=_pair(raw.get("gaps", base.gaps)),
            network=str(raw.get("network", base.network)),
            client=str(raw.get("client", base.client)),
            flush_ms=raw.get("flush_ms"),
            out_dir=out_dir,
            keep_data=keep_data,
        )

    def check(self) -> None:
        """Refuse combinations that cannot run (ValueError with the reason)."""
        if self.network not in NETWORKS:
            raise ValueError(f"network must be one of {', '.join(NETWORKS)}, not {self.network}")
        if self.client not in CLIENTS:
            raise ValueError(f"client must be one of {', '.join(CLIENTS)}, not {self.client}")
        kernel_only = [k for k in self.faults if k in KERNEL_ONLY_FAULTS]
        if kernel_only and self.network != "kernel":
            raise ValueError(f"fault kinds {', '.join(kernel_only)} need --network kernel")
        if "replace-voter" in self.faults and self.engine != "raft":
            raise ValueError("replace-voter needs quorum engine raft (fixed voters in pysyncobj)")
        if self.network == "kernel":
            return  # real addresses: both engines run every kind
        if "partition" in self.faults and self.network == "direct":
            raise ValueError("network partitions need --network proxy or kernel")
        if "partition" in self.faults and self.engine not in ENGINES_WITH_LINKS:
            raise ValueError(
                f"network partitions need quorum engine {' or '.join(ENGINES_WITH_LINKS)}, "
                f"not {self.engine}: pysyncobj identifies peers by address, so its links "
                "cannot run through the harness's proxies"
            )

    def timing(self) -> Timing:
        return Timing(
            min_window_s=self.windows[0],
            max_window_s=self.windows[1],
            min_gap_s=self.gaps[0],
            max_gap_s=self.gaps[1],
        )


@dataclass(slots=True)
class RunResult:
    config: RunConfig
    run_dir: Path
    summary: dict[str, Any]
    violations: list[Violation] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations


def schedule_for(config: RunConfig) -> Schedule:
    return build_schedule(
        config.seed,
        config.faults,
        config.duration_s,
        config.nodes,
        config.partitions,
        max_down=config.max_down,
        allow_majority=config.allow_majority,
        timing=config.timing(),
    )


def replay_command(config: RunConfig) -> str:
    """The exact command line that runs this configuration again."""
    default = RunConfig()
    parts = [
        "rillet chaos run",
        f"--nodes {config.nodes}",
        f"--duration {config.duration_s:g}",
        f"--seed {config.seed}",
        f"--faults {','.join(config.faults)}",
    ]
    optional = [
        ("--partitions", config.partitions, default.partitions),
        ("--producers", config.producers, default.producers),
        ("--rate", config.rate, default.rate),
        ("--members", config.members, default.members),
        ("--max-down", config.max_down, default.max_down),
        ("--min-insync", config.min_insync, default.min_insync),
        ("--engine", config.engine, default.engine),
        ("--network", config.network, default.network),
        ("--client", config.client, default.client),
        ("--flush-ms", config.flush_ms, default.flush_ms),
    ]
    parts += [
        f"{flag} {value:g}" if isinstance(value, float) else f"{flag} {value}"
        for flag, value, base in optional
        if value != base
    ]
    for flag, pair, base in (
        ("--windows", config.windows, default.windows),
        ("--gaps", config.gaps, default.gaps),
    ):
        if pair != base:
            parts.append(f"{flag} {pair[0]:g},{pair[1]:g}")
    if config.allow_majority:
        parts.append("--allow-majority")
    if not config.churn:
        parts.append("--no-churn")
    if config.out_dir != default.out_dir:
        parts.append(f"--out {config.out_dir}")
    return " ".join(parts)


def port_taken(exc: NodeStartError) -> bool:
    """Whether a node could not start only because a planned port was taken meanwhile."""
    return PORT_TAKEN in str(exc).lower()


def run_once(
    config: RunConfig, node_wrap: NodeWrap | None = None, schedule: Schedule | None = None
) -> RunResult:
    """Run one seeded schedule against a fresh cluster and judge it. ``node_wrap``: how
    each node's argv is changed (a test runs a node with a fault injected); ``schedule``:
    steps to run instead of the seed's (a bench repeats one fault kind).

    The plan picks free ports before the nodes bind them, so on a busy machine another
    process can take one in between: a cluster that could not start for that reason (before
    any workload or fault) is planned afresh, at most ``START_ATTEMPTS`` times."""
    for attempt in range(1, START_ATTEMPTS + 1):
        try:
            return _run_once(config, node_wrap, schedule)
        except NodeStartError as exc:
            if not port_taken(exc) or attempt == START_ATTEMPTS:
                raise
            log.warning("seed %d: a planned port was taken, planning again", config.seed)
    raise AssertionError("unreachable")


def _wraps(inner: NodeWrap | None, outer: NodeWrap | None) -> NodeWrap | None:
    """``inner`` then ``outer`` (the network namespace runs whatever the node's argv is)."""
    if inner is None or outer is None:
        return inner or outer
    return lambda node_id, argv: outer(node_id, inner(node_id, argv))


def _run_once(
    config: RunConfig, node_wrap: NodeWrap | None, schedule: Schedule | None
) -> RunResult:
    config.check()
    schedule = schedule if schedule is not None else schedule_for(config)
    run_dir = config.run_dir().resolve()
    _fresh_dir(run_dir)
    kernel = config.network == "kernel"
    proxied = config.engine in ENGINES_WITH_LINKS and config.network == "proxy"
    links = LinkProxies() if proxied else None
    with ExitStack() as stack:
        network = None
        if kernel:
            # Namespaces first (deleted last, also on failure), then the harness moves
            # into the clients' namespace: every client it starts reaches the nodes there.
            network = stack.enter_context(KernelNetwork(list(range(1, config.nodes + 1))))
            stack.enter_context(network.entered())
        plan = plan_cluster(
            run_dir / "cluster",
            config.nodes,
            (KERNEL_CLUSTER_CONFIG if kernel else CLUSTER_CONFIG).format(engine=config.engine),
            route=links.route if links is not None else None,
            hosts=network.hosts if network is not None else None,
        )
        if links is not None:
            stack.enter_context(links)  # starts forwarding: every link is planned by now
        if any(k in DISK_FAULTS for k in config.faults):  # the fault-injecting file layer
            node_wrap = _wraps(faulty_wrap(lambda i: plan.node(i).work_dir), node_wrap)
        if any(k in CLOCK_FAULTS for k in config.faults):
            # Clock faults: every node reads its wall clock through the test-only shim.
            node_wrap = _wraps(node_wrap, clock_wrap(Path(plan.base_dir)))
        wrap = _wraps(node_wrap, network.wrap if network is not None else None)
        cluster = stack.enter_context(LocalCluster(plan, log_level="INFO", wrap=wrap))
        cluster.start(timeout_s=START_TIMEOUT_S)
        _create_topic(cluster, config)
        history = HistoryWriter(run_dir / HISTORY_FILE)
        try:
            history.write(
                {
                    "type": "meta",
                    "meta": {"config": config.to_json(), "schedule": schedule.to_json()},
                }
            )
            final = _run_workload(cluster, config, schedule, history, run_dir, links, network)
        finally:
            history.close()
    final.save(run_dir)
    return judge(config, run_dir)


def judge(config: RunConfig, run_dir: Path) -> RunResult:
    """Check a finished run's files, write its summary and timeline (also for re-checks)."""
    history = load_history(run_dir / HISTORY_FILE)
    final = FinalState.load(run_dir)
    violations = check_all(history, final) + clock_row_stalls(history) + voter_set(history, final)
    summary = summarize(history, final, violations)
    summary["config"] = config.to_json()
    summary["replay"] = replay_command(config)
    (run_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    write_timeline(history, run_dir / TIMELINE_FILE)
    if not violations and not config.keep_data:
        shutil.rmtree(run_dir / "cluster", ignore_errors=True)
    return RunResult(config, run_dir, summary, violations)


def sweep(config: RunConfig, seeds: int, on_result: Any = None) -> list[RunResult]:
    """Run seeds ``config.seed`` .. ``config.seed + seeds - 1`` one after the other."""
    results = []
    for seed in range(config.seed, config.seed + seeds):
        result = run_once(replace(config, seed=seed))
        results.append(result)
        if on_result is not None:
            on_result(result)
    return results


def _pair(raw: Any) -> tuple[float, float]:
    low, high = raw
    return float(low), float(high)


def _fresh_dir(run_dir: Path) -> None:
    """A clean directory for the run; refuses to delete one that is not a chaos run's."""
    if run_dir.exists():
        ours = (run_dir / HISTORY_FILE).exists() or (run_dir / "cluster").exists()
        if not ours and any(run_dir.iterdir()):
            raise ChaosError(f"{run_dir} exists and is not a chaos run directory")
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True)


def _create_topic(cluster: LocalCluster, config: RunConfig) -> None:
    ids = [n.node_id for n in cluster.plan.nodes]
    if probes.wait_until(lambda: probes.brokers_unfenced(cluster, ids), START_TIMEOUT_S) is None:
        raise ChaosError("the brokers did not all register in time")
    topic_config = {"min.insync.replicas": str(min(config.min_insync, config.replication_factor))}
    if config.flush_ms is not None:
        topic_config["flush.ms"] = str(config.flush_ms)
    with BlockingAdmin(cluster.bootstrap) as admin:
        admin.create_topics(
            [NewTopic(TOPIC, config.partitions, config.replication_factor, topic_config)]
        )
    if (
        probes.wait_until(lambda: probes.topic_healthy(cluster.bootstrap, TOPIC), START_TIMEOUT_S)
        is None
    ):
        raise ChaosError(f"topic {TOPIC} did not get leaders and a full ISR in time")


def _run_workload(
    cluster: LocalCluster,
    config: RunConfig,
    schedule: Schedule,
    history: HistoryWriter,
    run_dir: Path,
    links: LinkProxies | None,
    kernel: KernelNetwork | None = None,
) -> FinalState:
    """Members, sampler, producers and churn run while the nemesis drives the schedule;
    the exit stack stops each of them (bounded) however this ends."""
    nemesis = Nemesis(
        cluster, TOPIC, config.partitions, history, schedule.max_down, links=links, kernel=kernel
    )
    options = ProducerOptions(rate=config.rate)
    kafka = config.client == "kafka"
    worker = KafkaProducerWorker if kafka else ProducerWorker
    # Kafka clients reach the nodes at their Kafka listeners; everything else is native.
    client_bootstrap = cluster.plan.kafka_bootstrap if kafka else cluster.bootstrap
    producers: list[ProducerWorker | KafkaProducerWorker] = [
        worker(f"w{i + 1}", client_bootstrap, TOPIC, config.partitions, history, options)
        for i in range(config.producers)
    ]
    sampler = GroupSampler(
        cluster.bootstrap,
        GROUP,
        TOPIC,
        history,
        classic_group=kafka,
    )
    churn = TopicChurn(cluster.bootstrap, history, config.replication_factor)
    with ExitStack() as stack:
        members = stack.enter_context(
            MemberProcesses(
                run_dir / "members",
                client_bootstrap,
                GROUP,
                TOPIC,
                history.t0,
                module=KAFKA_MEMBER_MODULE if kafka else NATIVE_MEMBER_MODULE,
            )
        )
        for i in range(config.members):
            members.start(f"c{i + 1}")
        sampler.start()
        stack.callback(sampler.stop)
        writers: list[ProducerWorker | KafkaProducerWorker | TopicChurn] = [
            *producers,
            *([churn] if config.churn else []),
        ]
        for w in writers:
            w.start()
            # Unwinding (an error, Ctrl-C, SIGTERM): a short wait, the thread is a daemon; a
            # finished run has stopped them below with the full outcome wait.
            stack.callback(w.stop, UNWIND_STOP_S)
        drive_then_stop(schedule, nemesis, history, writers)
        return collect_final_state(
            cluster,
            nemesis,
            members,
            sampler,
            history,
            topic=TOPIC,
            group=GROUP,
            partitions=config.partitions,
            timeout_s=config.recovery_timeout_s,
        )


def drive_then_stop(
    schedule: Schedule, nemesis: Nemesis, history: HistoryWriter, writers: list[Any]
) -> None:
    """Drive the schedule, heal whatever is left (also on failure), then stop the writers
    (each ``stop()`` waits for its outcomes, bounded)."""
    try:
        _drive(schedule, nemesis, history)
    finally:
        nemesis.heal_all()
        history.write({"type": "phase", "phase": "healed"})
    for w in writers:
        if not w.stop():
            log.error("%s did not stop in time", w)
    history.write({"type": "phase", "phase": "writers-stopped"})


def _drive(
    schedule: Schedule,
    nemesis: Nemesis,
    history: HistoryWriter,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Apply and heal the steps at their times (heals first when times tie).

    A step that ends late (a restart waits until the node is ready) delays every later
    event by as much, so the gaps the schedule left for recovery are kept; the run then
    ends that much later. A fault whose start ends a little late (finding its target, the
    ISR and Raft leader probes: tens to hundreds of milliseconds, more on a client that
    starts a connection for each) is healed as much later, so it stays in force for its
    whole window: otherwise each target's probes shortened its pauses by their own
    duration, and a pause row compared pauses of different lengths.
    """
    steps = {s.index: s for s in schedule.steps}
    events = [(s.start_s, 1, s.index) for s in schedule.steps]
    heapq.heapify(events)
    lag = 0.0
    while events:
        at, phase, index = heapq.heappop(events)
        _sleep_until(history, at + lag, nemesis, sleep)
        if phase == 1:
            nemesis.start(steps[index])
        else:
            nemesis.heal(steps[index])
        late = history.clock() - (at + lag)
        if late > MAX_STEP_LATENESS_S:
            lag += late
            late = 0.0
        if phase == 1:
            heapq.heappush(events, (steps[index].heal_s + max(late, 0.0), 0, index))
    if lag > 0:
        history.write({"type": "phase", "phase": "schedule-delayed", "lag_s": round(lag, 3)})
    _sleep_until(history, schedule.duration_s + lag, nemesis, sleep)


def _sleep_until(
    history: HistoryWriter, at: float, nemesis: Nemesis, sleep: Callable[[float], None]
) -> None:
    while (remaining := at - history.clock()) > 0:
        nemesis.check_crashes()
        sleep(min(remaining, 0.25))
