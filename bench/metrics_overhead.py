"""What the HTTP endpoint's metrics cost the data path: a 1-node cluster with ``[http]`` off
and on, alternately, each running bench/produce_throughput.py then
bench/consume_throughput.py.

Besides each run's records/s it reports the node's own CPU seconds per record (from
/proc/PID/stat), which a busy shared machine disturbs less than wall-clock throughput, and
the number of produce and fetch requests the node served (from its /metrics), so the
per-request cost of the metrics can be set against them. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

from _common import REPO, emit, process_cpu_s
from prometheus_client.parser import text_string_to_metric_families

from rillet.launcher.local_cluster import LocalCluster, plan_cluster


def request_counts(url: str) -> dict[str, float]:
    with urllib.request.urlopen(url, timeout=10) as resp:
        text = resp.read().decode()
    counts: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        if family.name == "rillet_request_duration_seconds":
            for s in family.samples:
                if s.name.endswith("_count"):
                    counts[s.labels["api"]] = counts.get(s.labels["api"], 0) + s.value
    return counts


def one_run(http: bool, records: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="rillet-bench-") as tmp:
        plan = plan_cluster(Path(tmp), 1, http=http, kafka=False)
        with LocalCluster(plan, log_level="WARNING") as cluster:
            cluster.start()
            pid = cluster.pid(1)
            for kind in ("produce", "consume"):
                before = process_cpu_s(pid)
                script = REPO / "bench" / f"{kind}_throughput.py"
                argv = [sys.executable, str(script), "--bootstrap", cluster.bootstrap]
                argv += ["--num-records", str(records), "--topic", "bench-metrics"]
                result = subprocess.run(argv, capture_output=True, text=True, check=True)
                line = json.loads(result.stdout.strip().splitlines()[-1])
                out[f"{kind}_records_per_s"] = line["records_per_s"]
                out[f"{kind}_node_cpu_us_per_record"] = (
                    (process_cpu_s(pid) - before) / records * 1e6
                )
            if http:
                node = plan.nodes[0]
                out["requests"] = request_counts(f"http://{node.host}:{node.http_port}/metrics")
            cluster.stop_all()
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--num-records", type=int, default=1_000_000)
    p.add_argument("--rounds", type=int, default=4)
    args = p.parse_args()
    runs: dict[str, list[dict[str, Any]]] = {"off": [], "on": []}
    for i in range(args.rounds):
        for mode in ("off", "on") if i % 2 == 0 else ("on", "off"):
            runs[mode].append(one_run(mode == "on", args.num_records))
            print(mode, runs[mode][-1], file=sys.stderr, flush=True)
    keys = [k for k in runs["off"][0] if k != "requests"]
    medians = {m: {k: statistics.median(r[k] for r in rs) for k in keys} for m, rs in runs.items()}
    emit(
        "metrics_overhead",
        vars(args),
        {"median": medians, "requests": runs["on"][-1]["requests"], "runs": runs},
    )


if __name__ == "__main__":
    main()
