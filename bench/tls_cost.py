"""What TLS costs: the same 3-node cluster setup with and without TLS on every link, in one run.

Starts a plaintext cluster, then one made like ``rillet cluster up --secure`` (TLS on both
listeners, between nodes and on the Raft transport; clients present a certificate). On
each: rillet's own client produces ``--num-records`` x 100 B (acks=all, replication factor
3) and reads them back; then librdkafka's end-to-end latency at ``--latency-rate`` records/s
over the Kafka listener. Prints one JSON line with both sets of figures and the ratios.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio
from _common import emit, ensure_topic, parser
from _kafka_latency import measure

from rillet.cli.perf_command import (
    ConsumePerfSpec,
    ProducePerfSpec,
    consume_perf,
    produce_perf,
)
from rillet.cli.secure_cluster import make_tls_files, plan_ssl_context
from rillet.launcher.local_cluster import LocalCluster, TlsPlan, plan_cluster

NODES = 3


def run_one(tls: bool, args: Any) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="rillet-bench-tls-") as tmp:
        base = Path(tmp)
        files: TlsPlan | None = make_tls_files(base) if tls else None
        plan = plan_cluster(base / "cluster", NODES, tls=files)
        with LocalCluster(plan, log_level="WARNING") as cluster:
            cluster.start()
            options: dict[str, Any] = {}
            context = plan_ssl_context(plan)
            if context is not None:
                options["ssl_context"] = context
            topic = f"bench-tls-{time.time_ns()}"
            trio.run(ensure_topic, plan.bootstrap, topic, 3, NODES, options)
            spec = ProducePerfSpec(topic, args.num_records, 100, acks="all")
            produced = trio.run(produce_perf, plan.bootstrap, spec, None, options)
            read = ConsumePerfSpec(topic, args.num_records)
            consumed = trio.run(consume_perf, plan.bootstrap, read, None, options)
            conf: dict[str, str] = {}
            if files is not None:
                conf = {
                    "security.protocol": "SSL",
                    "ssl.ca.location": files.cafile,
                    "ssl.certificate.location": files.client_certfile,
                    "ssl.key.location": files.client_keyfile,
                }
            latency_topic = f"bench-tls-latency-{time.time_ns()}"
            trio.run(ensure_topic, plan.bootstrap, latency_topic, 3, NODES, options)
            latency = measure(
                plan.kafka_bootstrap, latency_topic, 3, args.latency_rate, args.seconds, conf
            )
    return {
        "produce_records_per_s": round(produced["records_per_s"]),
        "consume_records_per_s": round(consumed["records_per_s"]),
        "e2e_latency": latency,
    }


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--num-records", type=int, default=500_000)
    p.add_argument("--latency-rate", type=int, default=10_000)
    p.add_argument("--seconds", type=float, default=20.0)
    args = p.parse_args()
    results: dict[str, Any] = {}
    for name, tls in (("plaintext", False), ("tls", True)):
        print(f"{name}: {NODES}-node cluster", file=sys.stderr)
        results[name] = run_one(tls, args)
        print(f"{name}: {results[name]}", file=sys.stderr)
    plain, secured = results["plaintext"], results["tls"]
    results["tls_over_plaintext"] = {
        "produce": round(secured["produce_records_per_s"] / plain["produce_records_per_s"], 3),
        "consume": round(secured["consume_records_per_s"] / plain["consume_records_per_s"], 3),
        "p99_added_ms": round(secured["e2e_latency"]["p99_ms"] - plain["e2e_latency"]["p99_ms"], 3),
    }
    emit("tls_cost", vars(args), results)


if __name__ == "__main__":
    main()
