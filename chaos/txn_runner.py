"""One run of the transactional workload (``rillet chaos txn``), from start to verdict.

The cluster, the proxies, the seeded schedule and the nemesis are the ones ``rillet chaos
run`` uses (``runner.RunConfig``, with its fault kinds and timing); the workload instead is
``txn_workload``'s: transactional writers committing and aborting across the input topic's
partitions, consume-transform-produce workers (offsets sent in the transaction) writing the
output topic, read_committed and read_uncommitted readers of the input topic during the run,
and samples of the group's committed offsets. After the last fault is healed and the
writers stopped, the cluster is given time to recover, then each topic is read whole at both
isolation levels and ``txn_checker`` judges the history. Every process and thread started is
stopped on the way out.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Iterable
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from rillet.chaos import probes
from rillet.chaos.errors import ChaosError
from rillet.chaos.history import HISTORY_FILE, HistoryWriter
from rillet.chaos.link_proxy import LinkProxies
from rillet.chaos.nemesis import Nemesis
from rillet.chaos.runner import (
    CLUSTER_CONFIG,
    ENGINES_WITH_LINKS,
    START_ATTEMPTS,
    START_TIMEOUT_S,
    NodeWrap,
    RunConfig,
    _fresh_dir,
    drive_then_stop,
    port_taken,
    schedule_for,
)
from rillet.chaos.txn_checker import COMMITTED, UNCOMMITTED, TxnViolation, check_txn_history
from rillet.chaos.txn_workload import (
    CtpWorker,
    OffsetSampler,
    Reader,
    TxnWriter,
    committed_offsets,
    consumer_config,
    value_text,
)
from rillet.client import BlockingAdmin, NewTopic
from rillet.launcher.local_cluster import LocalCluster, plan_cluster
from rillet.launcher.local_node import NodeStartError

log = logging.getLogger(__name__)
IN_TOPIC = "txn-in"
OUT_TOPIC = "txn-out"
GROUP = "txn-ctp"
SUMMARY_FILE = "summary.json"
FINAL_READ_TIMEOUT_S = 60.0
# Asking a partition's high watermark again after a retriable error: how long, how often.
WATERMARK_TIMEOUT_S = 15.0
WATERMARK_RETRY_S = 0.2
RECOVERY_TIMEOUT_S = 90.0
UNWIND_STOP_S = 5.0
DRAINED_STILL_S = 2.0
# How long the final reads wait for the last commits' markers (see _final_reads).
FINAL_SETTLE_S = 30.0
FINAL_RETRY_S = 2.0


@dataclass(slots=True)
class TxnRunResult:
    config: RunConfig
    run_dir: Path
    summary: dict[str, Any]
    violations: list[TxnViolation] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations


def run_txn_once(config: RunConfig, node_wrap: NodeWrap | None = None) -> TxnRunResult:
    """``config.producers`` writers, ``config.members`` consume-transform-produce workers,
    one reader per isolation level; ``node_wrap`` runs nodes with a test's fault. A cluster
    that could not start only because a planned port was taken meanwhile is planned again
    (as ``runner.run_once`` does)."""
    for attempt in range(1, START_ATTEMPTS + 1):
        try:
            return _run_txn_once(config, node_wrap)
        except NodeStartError as exc:
            if not port_taken(exc) or attempt == START_ATTEMPTS:
                raise
            log.warning("seed %d: a planned port was taken, planning again", config.seed)
    raise AssertionError("unreachable")


def _run_txn_once(config: RunConfig, node_wrap: NodeWrap | None) -> TxnRunResult:
    if config.network != "proxy":
        raise ChaosError("the transactional workload runs on the proxy network only")
    config.check()
    schedule = schedule_for(config)
    run_dir = config.run_dir().resolve()
    _fresh_dir(run_dir)
    links = LinkProxies() if config.engine in ENGINES_WITH_LINKS else None
    with ExitStack() as stack:
        plan = plan_cluster(
            run_dir / "cluster",
            config.nodes,
            CLUSTER_CONFIG.format(engine=config.engine),
            route=links.route if links is not None else None,
        )
        if links is not None:
            stack.enter_context(links)
        cluster = stack.enter_context(LocalCluster(plan, log_level="INFO", wrap=node_wrap))
        cluster.start(timeout_s=START_TIMEOUT_S)
        _create_topics(cluster, config)
        history = stack.enter_context(HistoryWriter(run_dir / HISTORY_FILE))
        history.write(
            {"type": "meta", "meta": {"config": config.to_json(), "schedule": schedule.to_json()}}
        )
        nemesis = Nemesis(
            cluster, IN_TOPIC, config.partitions, history, schedule.max_down, links=links
        )
        stats = _workload(cluster, config, nemesis, history, schedule)
    return judge_txn(config, run_dir, stats)


def _workload(
    cluster: LocalCluster,
    config: RunConfig,
    nemesis: Nemesis,
    history: HistoryWriter,
    schedule: Any,
) -> dict[str, Any]:
    boot = cluster.plan.kafka_bootstrap
    parts = config.partitions
    writers = [
        TxnWriter(f"t{i + 1}", boot, IN_TOPIC, parts, history, config.seed)
        for i in range(config.producers)
    ]
    ctps = [
        CtpWorker(f"x{i + 1}", boot, IN_TOPIC, OUT_TOPIC, parts, GROUP, history)
        for i in range(config.members)
    ]
    readers = [
        Reader(f"r-{iso}", boot, IN_TOPIC, parts, iso, history) for iso in (COMMITTED, UNCOMMITTED)
    ]
    sampler = OffsetSampler(boot, GROUP, IN_TOPIC, parts, history)
    threads = [*ctps, *readers, sampler, *writers]
    with ExitStack() as stack:
        for t in threads:
            t.start()
            stack.callback(t.stop, UNWIND_STOP_S)
        drive_then_stop(schedule, nemesis, history, writers)
        recovered = _recover(cluster, nemesis)
        history.write({"type": "phase", "phase": "recovered", "ok": recovered})
        # The workers drain what the writers left, then stop; the readers too.
        _wait_drained(boot, parts)
        for t in [*ctps, *readers, sampler]:
            t.stop()
        sampler.sample(final=True)
        expected = {
            IN_TOPIC: set().union(*(w.committed_values for w in writers)),
            OUT_TOPIC: set().union(*(c.committed_values for c in ctps)),
        }
        attempts = _final_reads(boot, parts, expected, history)
        history.write({"type": "phase", "phase": "collected"})
        errors = [f"{t!r}: {t.error!r}" for t in threads if t.error is not None]
        return {
            "recovered": recovered,
            "thread_errors": errors,
            "writer_commits": sum(w.committed for w in writers),
            "ctp_commits": sum(c.committed for c in ctps),
            "reads": {r.name: r.read for r in readers},
            "crashes": dict(nemesis.crashes),
            "final_read_attempts": attempts,
        }


def _final_reads(
    boot: str, partitions: int, expected: dict[str, set[str]], history: HistoryWriter
) -> int:
    """Both topics read whole at both isolation levels; returns the attempts it took.

    A commit returns once the decision is in the metadata log; its markers follow (in Kafka
    too), so a read right after the last commit can stop at a last stable offset that is
    about to move. The reads are repeated (bounded) while a transaction whose commit
    returned is not wholly visible to read_committed yet; the last attempt is what the
    checker judges, so a write that never shows up is still found lost."""
    deadline = time.monotonic() + FINAL_SETTLE_S
    attempt = 0
    while True:
        attempt += 1
        rows = [
            final_read(boot, topic, partitions, iso)
            for topic in (IN_TOPIC, OUT_TOPIC)
            for iso in (COMMITTED, UNCOMMITTED)
        ]
        visible = {
            r["topic"]: {str(v) for _, _, v in r["records"]} for r in rows if r["iso"] == COMMITTED
        }
        settled = all(expected[t] <= visible.get(t, set()) for t in expected)
        if settled or time.monotonic() > deadline:
            for row in rows:
                history.write(row)
            return attempt
        time.sleep(FINAL_RETRY_S)


def _recover(cluster: LocalCluster, nemesis: Nemesis) -> bool:
    ids = [n.node_id for n in cluster.plan.nodes]
    nemesis.check_crashes()

    def healthy() -> bool:
        return (
            all(cluster.alive(i) for i in ids)
            and probes.brokers_unfenced(cluster, ids)
            and probes.topic_healthy(cluster.bootstrap, IN_TOPIC)
            and probes.topic_healthy(cluster.bootstrap, OUT_TOPIC)
        )

    return probes.wait_until(healthy, RECOVERY_TIMEOUT_S, poll_s=0.25) is not None


def _wait_drained(bootstrap: str, partitions: int, timeout_s: float = 30.0) -> None:
    """Until the group's committed offsets stop moving for a few seconds (bounded)."""
    deadline = time.monotonic() + timeout_s
    last: dict[int, int] | None = None
    still_since = time.monotonic()
    while time.monotonic() < deadline:
        now = committed_offsets(bootstrap, GROUP, IN_TOPIC, partitions)
        if now != last:
            last, still_since = now, time.monotonic()
        elif time.monotonic() - still_since > DRAINED_STILL_S:
            return
        time.sleep(0.5)


def final_read(bootstrap: str, topic: str, partitions: int, iso: str) -> dict[str, Any]:
    """Everything in ``topic`` at isolation level ``iso``, to where the fetcher reports the
    end of every partition (``enable.partition.eof``: the last stable offset under
    read_committed, the high watermark otherwise)."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    config = consumer_config(bootstrap, f"chaos-final-{iso}", iso)
    config["enable.partition.eof"] = True
    consumer = Consumer(config)
    records: list[list[Any]] = []
    at_end: set[int] = set()
    ends: dict[str, int] = {}
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        deadline = time.monotonic() + FINAL_READ_TIMEOUT_S
        while len(at_end) < partitions and time.monotonic() < deadline:
            for m in consumer.consume(500, 0.5):
                error = m.error()
                p = m.partition()
                if p is None:
                    continue
                if error is None:
                    records.append([p, m.offset(), value_text(m.value())])
                    at_end.discard(p)
                elif error.code() == KafkaError._PARTITION_EOF:
                    at_end.add(p)
        for p in range(partitions):
            ends[str(p)] = _high_watermark(
                consumer, TopicPartition(topic, p), time.monotonic() + WATERMARK_TIMEOUT_S
            )
    finally:
        consumer.close()
    return {
        "type": "final",
        "topic": topic,
        "iso": iso,
        "complete": len(at_end) == partitions,
        "end_offsets": ends,
        "records": records,
    }


def _high_watermark(consumer: Any, tp: Any, deadline: float) -> int:
    """The partition's high watermark, asked again while the answer is a retriable error
    (a leader that moved since the client's metadata, as after a preferred-leader election
    at the end of a run) and the final read's deadline allows."""
    from confluent_kafka import KafkaException

    while True:
        try:
            _, high = consumer.get_watermark_offsets(tp, 5.0)
            return int(high)
        except KafkaException as exc:
            if not exc.args[0].retriable() or time.monotonic() >= deadline:
                raise
            time.sleep(WATERMARK_RETRY_S)


def judge_txn(
    config: RunConfig, run_dir: Path, stats: dict[str, Any] | None = None
) -> TxnRunResult:
    rows = _load_rows(run_dir / HISTORY_FILE)
    violations = check_txn_history(rows, IN_TOPIC, OUT_TOPIC)
    stats = stats or {}
    if stats.get("thread_errors"):
        violations.append(
            TxnViolation("harness", "client thread(s) failed", stats["thread_errors"])
        )
    if stats.get("recovered") is False:
        violations.append(TxnViolation("not-recovered", "the cluster did not recover in time"))
    if stats.get("crashes"):
        violations.append(TxnViolation("crash", "node(s) exited on their own", [stats["crashes"]]))
    summary = {
        "config": config.to_json(),
        "workload": "transactional",
        **_counts(rows),
        **{k: v for k, v in stats.items() if k != "thread_errors"},
        "violations": [
            {"check": v.check, "message": v.message, "examples": v.examples} for v in violations
        ],
        "verdict": "ok" if not violations else "violations",
    }
    (run_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    if not violations and not config.keep_data:
        shutil.rmtree(run_dir / "cluster", ignore_errors=True)
    return TxnRunResult(config, run_dir, summary, violations)


def _counts(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    outcomes: dict[str, dict[str, int]] = {"txn": {}, "ctp": {}}
    faults: dict[str, int] = {}
    for row in rows:
        kind = row.get("type")
        if kind in outcomes:
            o = outcomes[kind]
            o[row["outcome"]] = o.get(row["outcome"], 0) + 1
        elif kind == "fault" and row.get("phase") == "start":
            faults[row["kind"]] = faults.get(row["kind"], 0) + 1
    return {"transactions": outcomes["txn"], "ctp_transactions": outcomes["ctp"], "faults": faults}


def _load_rows(path: Path) -> list[dict[str, Any]]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            rows.append(json.loads(line))
    return rows


def _create_topics(cluster: LocalCluster, config: RunConfig) -> None:
    ids = [n.node_id for n in cluster.plan.nodes]
    if probes.wait_until(lambda: probes.brokers_unfenced(cluster, ids), START_TIMEOUT_S) is None:
        raise ChaosError("the brokers did not all register in time")
    topic_config = {"min.insync.replicas": str(min(config.min_insync, config.replication_factor))}
    with BlockingAdmin(cluster.bootstrap) as admin:
        admin.create_topics(
            [
                NewTopic(t, config.partitions, config.replication_factor, topic_config)
                for t in (IN_TOPIC, OUT_TOPIC)
            ]
        )
    for t in (IN_TOPIC, OUT_TOPIC):
        if (
            probes.wait_until(partial(probes.topic_healthy, cluster.bootstrap, t), START_TIMEOUT_S)
            is None
        ):
            raise ChaosError(f"topic {t} did not get leaders and a full ISR in time")
