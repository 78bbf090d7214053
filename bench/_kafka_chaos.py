"""The chaos harness's Kafka-client workload and seeded schedule against a real Apache Kafka
4.x cluster (three combined broker+controller KRaft processes, tests/support/real_kafka.py).

What is the same as ``rillet chaos run --client kafka``: the schedule (``build_schedule``
from the seed), the nemesis and its injectors (SIGKILL, SIGSTOP/SIGCONT, kill-two, kill-all),
the librdkafka idempotent acks=all producers (``KafkaProducerWorker``), the classic-group
member processes, the history format, the checker and the availability report. What differs
is only how the cluster is driven: ``KafkaProcesses`` gives the nemesis the process handles
of a ``LocalCluster`` for Kafka's JVMs, and ``KafkaNemesis`` resolves targets the Kafka way
(the active controller from the voters' ``quorum-state`` files, partition leaders and ISRs
from a Metadata request).

Network partitions (``partition`` steps) run through the same link proxies as rillet's
(chaos/link_proxy.py) when ``route_links`` wires them (the bench does so when the faults
name ``partition``): every node-to-node byte of Kafka goes through the proxy of its
directed link too. Kafka's nodes find each other by address, so each node is given its
own view: its ``controller.quorum.voters`` name every other voter at the proxy of the link
from this node, and for replication every node has one listener per node that may dial it
(``LINK1``, ``LINK2``, ...), advertised at the proxy of that node's link, with node ``i``
using ``LINKi`` as its ``inter.broker.listener.name``. Clients reach the nodes straight, as
rillet's do.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from rillet.chaos.final_state import FinalState
from rillet.chaos.history import HISTORY_FILE, HistoryWriter
from rillet.chaos.kafka_clients import KafkaProducerWorker
from rillet.chaos.link_proxy import LinkProxies
from rillet.chaos.members import KAFKA_MEMBER_MODULE, MemberProcesses
from rillet.chaos.nemesis import Nemesis
from rillet.chaos.runner import GROUP, TOPIC, RunConfig, _drive, schedule_for
from rillet.chaos.schedule import FaultStep, Schedule
from rillet.chaos.workload import FinalRead, ProducerOptions
from rillet.launcher.local_node import NodeStartError

READY_TIMEOUT_S = 60.0
RECOVERY_TIMEOUT_S = 90.0
CATCH_UP_S = 20.0
POLL_S = 0.2
# Kafka's timeouts set like the rillet cluster's in the harness's proxy mode (runner.py).
KAFKA_PROPERTIES = {
    "broker.session.timeout.ms": "3000",
    "broker.heartbeat.interval.ms": "300",
    "replica.lag.time.max.ms": "3000",
    "min.insync.replicas": "2",
    "auto.create.topics.enable": "false",
}


def route_links(kafka: Any, links: LinkProxies) -> None:
    """Give every member of the (not yet launched) RealKafkaCluster ``kafka`` the config
    that sends its node-to-node bytes through ``links`` (module docstring)."""
    from real_kafka import HOST, free_port

    members = {m.node_id: m for m in kafka.members}
    # The replication listener of node j for dialer i: a port of j's, reached via the proxy.
    listen = {(i, j): free_port() for i in members for j in members}
    for i, m in members.items():
        voters, listeners, advertised = [], [], []
        for j, other in members.items():
            port = (
                other.controller_port
                if i == j
                else links.route(i, j, "raft", other.controller_port)
            )
            voters.append(f"{j}@{HOST}:{port}")
        for dialer in members:
            name = f"LINK{dialer}"
            listeners.append(f"{name}://{HOST}:{listen[(dialer, i)]}")
            port = (
                listen[(dialer, i)]
                if dialer == i
                else links.route(dialer, i, "repl", listen[(dialer, i)])
            )
            advertised.append(f"{name}://{HOST}:{port}")
        names = ",".join(f"LINK{d}:PLAINTEXT" for d in members)
        m.voters = ",".join(voters)
        m.properties = {
            **m.properties,
            "listeners": f"PLAINTEXT://{HOST}:{m.port},CONTROLLER://{HOST}:{m.controller_port},"
            + ",".join(listeners),
            "advertised.listeners": f"PLAINTEXT://{HOST}:{m.port}," + ",".join(advertised),
            "inter.broker.listener.name": f"LINK{i}",
            "listener.security.protocol.map": f"PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,{names}",
        }


class _Plan:
    """What the nemesis reads of a cluster plan: node ids and work directories."""

    def __init__(self, members: list[Any]) -> None:
        self.nodes = [_NodePlan(m.node_id, str(m.work_dir)) for m in members]

    def node(self, node_id: int) -> Any:
        return next(n for n in self.nodes if n.node_id == node_id)


class _NodePlan:
    def __init__(self, node_id: int, work_dir: str) -> None:
        self.node_id, self.work_dir = node_id, work_dir


class KafkaProcesses:
    """A LocalCluster's process handles (kill, signal, spawn, wait_ready, ...) for the JVMs
    of a RealKafkaCluster. A restart runs the same command without formatting again."""

    def __init__(self, kafka: Any) -> None:
        self.kafka = kafka
        self.members = {m.node_id: m for m in kafka.members}
        self.plan = _Plan(kafka.members)
        self._log_mark: dict[int, int] = {}

    @property
    def bootstrap(self) -> str:
        return str(self.kafka.bootstrap)

    def alive(self, node_id: int) -> bool:
        proc = self.members[node_id].proc
        return proc is not None and proc.poll() is None

    def signal(self, node_id: int, signum: int) -> None:
        if self.alive(node_id):
            self.members[node_id].proc.send_signal(signum)

    def kill(self, node_id: int) -> None:
        proc = self.members[node_id].proc
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

    def stop(self, node_id: int) -> int | None:
        proc = self.members[node_id].proc
        if proc is None:
            return None
        if proc.poll() is None:
            proc.kill()
        return int(proc.wait())

    def spawn(self, node_id: int) -> None:
        m = self.members[node_id]
        if self.alive(node_id):
            raise NodeStartError(f"kafka node {node_id} is already running")
        self._log_mark[node_id] = len(m._log_text())
        with open(m.work_dir / "stdout.log", "ab") as out:
            m.proc = subprocess.Popen(
                m._java("kafka.Kafka", str(m.work_dir / "server.properties")),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def wait_ready(self, node_ids: list[int], timeout_s: float = READY_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        for node_id in node_ids:
            m = self.members[node_id]
            mark = self._log_mark.get(node_id, 0)
            while "Kafka Server started" not in m._log_text()[mark:]:
                if not self.alive(node_id):
                    raise NodeStartError(f"kafka node {node_id} exited: {m.log_tail()}")
                if time.monotonic() > deadline:
                    raise NodeStartError(f"kafka node {node_id} not ready in {timeout_s:g}s")
                time.sleep(POLL_S)

    def log_tail(self, node_id: int, lines: int = 40) -> str:
        return str(self.members[node_id].log_tail(lines))

    def up_bootstrap(self, up: list[int]) -> str:
        return ",".join(self.members[i].bootstrap for i in up)

    def active_controller(self, up: list[int]) -> int | None:
        """The KRaft leader, from the voters' quorum-state files (the highest epoch)."""
        best: tuple[int, int] | None = None
        for i in up:
            path = self.members[i].work_dir / "data" / "__cluster_metadata-0" / "quorum-state"
            try:
                raw = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            leader, epoch = int(raw.get("leaderId", -1)), int(raw.get("leaderEpoch", -1))
            if leader >= 0 and (best is None or epoch > best[1]):
                best = (leader, epoch)
        return best[0] if best is not None and best[0] in up else None

    def partitions(self, up: list[int], topic: str) -> dict[int, tuple[int, list[int]]] | None:
        """partition -> (leader, ISR), from a Metadata request to the nodes that are up."""
        from confluent_kafka import Consumer, KafkaException

        if not up:
            return None
        consumer = Consumer({"bootstrap.servers": self.up_bootstrap(up), "group.id": "probe"})
        try:
            meta = consumer.list_topics(topic, timeout=5)
        except KafkaException:
            return None
        finally:
            consumer.close()
        found = meta.topics.get(topic)
        if found is None or found.error is not None:
            return None
        return {p: (pm.leader, list(pm.isrs)) for p, pm in found.partitions.items()}


class KafkaNemesis(Nemesis):
    """The nemesis with Kafka's answers to "who is the controller / the leader of p"."""

    def _resolve(self, step: FaultStep) -> tuple[int | None, str | None]:
        procs: KafkaProcesses = self.cluster  # type: ignore[assignment]
        up = self.up()
        if step.target == "raft-leader":
            leader = procs.active_controller(up)
            return (leader, None) if leader is not None else (None, "no live controller")
        if step.target == "partition-leader" and step.partition is not None:
            parts = procs.partitions(up, self.topic)
            leader = parts.get(step.partition, (-1, []))[0] if parts else None
            if leader is None or leader not in up:
                return None, f"partition {step.partition} has no live leader"
            return leader, None
        return super()._resolve(step)


def _isr_probe(nemesis: Nemesis) -> dict[int, list[int]] | None:
    parts = nemesis.cluster.partitions(nemesis.up(), nemesis.topic)  # type: ignore[attr-defined]
    return {p: isr for p, (_, isr) in parts.items()} if parts else None


def _controller_probe(nemesis: Nemesis) -> int | None:
    return nemesis.cluster.active_controller(nemesis.up())  # type: ignore[attr-defined, no-any-return]


def _healthy(procs: KafkaProcesses, replicas: int) -> bool:
    parts = procs.partitions(list(procs.members), TOPIC)
    return bool(parts) and all(
        leader >= 0 and len(isr) >= replicas for leader, isr in parts.values()
    )


def _wait(pred: Any, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(POLL_S * 2)
    return False


def _members_settle(members: MemberProcesses) -> None:
    """Until the members have received nothing new for a second (at most CATCH_UP_S): they
    read what is left; what they read is checked, how far they got is not."""
    deadline = time.monotonic() + CATCH_UP_S
    seen, quiet_since = -1, time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - quiet_since < 1.0:
        now = len(members.received())
        if now != seen:
            seen, quiet_since = now, time.monotonic()
        time.sleep(POLL_S)


def _create_topic(bootstrap: str, config: RunConfig) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    topic = NewTopic(
        TOPIC,
        config.partitions,
        config.replication_factor,
        config={"min.insync.replicas": str(min(config.min_insync, config.replication_factor))},
    )
    for future in admin.create_topics([topic]).values():
        future.result(60)


def _final_read(bootstrap: str, partitions: int, timeout_s: float = 60.0) -> FinalRead:
    from confluent_kafka import Consumer, TopicPartition

    out = FinalRead()
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "chaos-final", "enable.auto.commit": False}
    )
    try:
        for p in range(partitions):
            _, high = consumer.get_watermark_offsets(TopicPartition(TOPIC, p), timeout=10)
            out.end_offsets[p] = high
            out.records[p] = []
        consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(partitions)])
        want = sum(out.end_offsets.values())
        deadline = time.monotonic() + timeout_s
        got = 0
        while got < want and time.monotonic() < deadline:
            for msg in consumer.consume(1000, timeout=1.0):
                if msg.error() is None and msg.offset() < out.end_offsets[msg.partition()]:
                    value = msg.value()
                    out.records[msg.partition()].append(
                        (msg.offset(), value.decode() if value else "")
                    )
                    got += 1
        for p in range(partitions):
            out.read_upto[p] = (out.records[p][-1][0] + 1) if out.records[p] else 0
            if out.records[p] and out.read_upto[p] < out.end_offsets[p]:
                out.error = f"partition {p} read to {out.read_upto[p]} of {out.end_offsets[p]}"
    finally:
        consumer.close()
    return out


def run_kafka_once(
    config: RunConfig, jars: Path, run_dir: Path, schedule: Schedule | None = None
) -> FinalState:
    """The seed's schedule (or ``schedule``) against a fresh 3-node Kafka cluster; writes
    ``run_dir``'s history and final state (judge them with ``rillet.chaos.runner.judge``)."""
    from real_kafka_cluster import RealKafkaCluster

    schedule = schedule if schedule is not None else schedule_for(config)
    shutil.rmtree(run_dir, ignore_errors=True)  # a fresh cluster: Kafka refuses an old one
    run_dir.mkdir(parents=True)
    cluster = RealKafkaCluster(
        jars, config.nodes, work_dir=run_dir / "cluster", properties=KAFKA_PROPERTIES
    )
    links = LinkProxies() if "partition" in config.faults else None
    if links is not None:
        route_links(cluster, links)
    with ExitStack() as stack:
        if links is not None:
            stack.enter_context(links)
        kafka = stack.enter_context(cluster)
        procs = KafkaProcesses(kafka)
        _create_topic(kafka.bootstrap, config)
        if not _wait(lambda: _healthy(procs, config.replication_factor), 60):
            raise RuntimeError("the Kafka topic did not get leaders and a full ISR")
        history = HistoryWriter(run_dir / HISTORY_FILE)
        final = FinalState(TOPIC, config.partitions)
        try:
            history.write(
                {
                    "type": "meta",
                    "meta": {"config": config.to_json(), "schedule": schedule.to_json()},
                }
            )
            nemesis = KafkaNemesis(
                procs,  # type: ignore[arg-type]
                TOPIC,
                config.partitions,
                history,
                schedule.max_down,
                restart_timeout_s=READY_TIMEOUT_S,
                links=links,
                isr_probe=_isr_probe,
                raft_leader_probe=_controller_probe,
            )
            options = ProducerOptions(rate=config.rate)
            producers = [
                KafkaProducerWorker(
                    f"w{i + 1}", kafka.bootstrap, TOPIC, config.partitions, history, options
                )
                for i in range(config.producers)
            ]
            with MemberProcesses(
                run_dir / "members",
                kafka.bootstrap,
                GROUP,
                TOPIC,
                history.t0,
                module=KAFKA_MEMBER_MODULE,
            ) as members:
                for i in range(config.members):
                    members.start(f"c{i + 1}")
                for w in producers:
                    w.start()
                try:
                    _drive(schedule, nemesis, history)
                finally:
                    nemesis.heal_all()
                    history.write({"type": "phase", "phase": "healed"})
                    for w in producers:
                        w.stop()
                history.write({"type": "phase", "phase": "writers-stopped"})
                final.recovered = _wait(
                    lambda: _healthy(procs, config.replication_factor), RECOVERY_TIMEOUT_S
                )
                history.write({"type": "phase", "phase": "recovered", "ok": final.recovered})
                _members_settle(members)
                members.close()
                final.received = members.received()
            read = _final_read(kafka.bootstrap, config.partitions)
            final.records, final.end_offsets, final.read_upto = (
                read.records,
                read.end_offsets,
                read.read_upto,
            )
            if read.error:
                final.notes.append(read.error)
            if not final.recovered:
                final.notes.append(f"not recovered within {RECOVERY_TIMEOUT_S:g}s")
        finally:
            history.close()
    final.save(run_dir)
    return final
