"""kafka-python's own integration suite, unchanged, against rillet and against Apache Kafka.

Usage::

    mkdir -p ~/.cache/rillet/kafka-python-3.0.11
    git --git-dir=<kafka-python's repository> archive 3.0.11 \
        | tar -x -C ~/.cache/rillet/kafka-python-3.0.11
    .venv/bin/python bench/kafka_python_suite.py ~/.cache/rillet/kafka-python-3.0.11

The checkout (kafka-python's repository at tag 3.0.11: its PyPI sdist lacks test/service.py)
is never copied into this repository. The suite runs in a venv of its own under
``~/.cache/rillet/kafka-python-suite-venv`` (made on first use: pytest-timeout, pytest-mock and
the compression libraries), with the checkout's ``kafka`` package. Each target is started
for the run and always stopped: ``rillet`` is a local 3-node cluster (ephemeral ports, topic
auto-creation on, as Kafka's default), ``kafka`` a one-node Apache Kafka 4.4 from Maven
Central's jars (tests/support/real_kafka.py). Both are set up as the suite's own broker
fixture sets up Kafka (servers/resources/default/kafka.properties in the checkout): new
topics get 4 partitions, an ACL authorizer runs that lets everyone in (Kafka:
``allow.everyone.if.no.acl.found``; rillet has no such switch, so the anonymous principal is
a super user), group sessions may be as short as 1 s. The suite is pointed at one node's Kafka
listener with ``KAFKA_VERSION=4.2.0 KAFKA_URI=kafka://H:P KAFKA_ROOT=<dir> pytest
test/integration -o addopts="" --timeout=45`` and writes JUnit XML; this script prints the
per-test table with the differences marked (stderr), writes every test's outcome and
message as JSON (``--json``, default ``<out-dir>/kafka_python_suite.json``) and prints one
JSON line with the counts and differences (stdout). ``--rillet-nodes`` and
``--kafka-nodes`` change the cluster sizes: a few of the suite's tests assume one broker
and fail on any 3-node cluster, Kafka's too (docs/kafka-compatibility.md lists them).

Without the checkout, or without Java/Maven/Maven Central for Kafka, the run (or that
target) is skipped with the reason, not failed.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import venv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _common import REPO, emit
from _junit_table import counts, differences, outcomes, table

from rillet.launcher.local_cluster import LocalCluster, plan_cluster

sys.path.insert(0, str(REPO / "tests" / "support"))  # the real Kafka launcher lives there
from real_kafka import KafkaUnavailable, RealKafka, ensure_jars
from real_kafka_cluster import RealKafkaCluster

SUITE_PACKAGES = (
    "pytest>=8",
    "pytest-timeout",
    "pytest-mock",
    "lz4",
    "python-snappy",
    "zstandard",
    "crc32c",
    "xxhash",
)
SUITE_KAFKA_VERSION = "4.2.0"  # what the suite is written for (newest it knows)
TARGETS = ("rillet", "kafka")
RILLET_NODES = 3
KAFKA_NODES = 1
# What the suite's own fixture sets on the Kafka broker it starts, where it changes a result.
SUITE_PARTITIONS = 4
KAFKA_SUITE_PROPERTIES = {
    "num.partitions": str(SUITE_PARTITIONS),
    "default.replication.factor": "1",
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "allow.everyone.if.no.acl.found": "true",
    "group.min.session.timeout.ms": "1000",
    "replica.lag.time.max.ms": "1000",
    "offsets.commit.timeout.ms": "500",
    "offsets.topic.num.partitions": "2",
}
EVERYONE = "User:ANONYMOUS"  # a plaintext listener's principal: a super user lets it do all
SUITE_TIMEOUT_S = 3600  # the whole suite on one target; each test has --timeout
PIP_TIMEOUT_S = 600


def cache_root() -> Path:
    env = os.environ.get("RILLET_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "rillet"


def suite_python(venv_dir: Path) -> Path:
    """The suite venv's interpreter, made (and its packages installed) on first use."""
    python = venv_dir / "bin" / "python"
    marker = venv_dir / ".suite-packages"
    wanted = "\n".join(SUITE_PACKAGES)
    if python.exists() and marker.exists() and marker.read_text() == wanted:
        return python
    print(f"making the suite's venv in {venv_dir}", file=sys.stderr)
    venv.EnvBuilder(with_pip=True, clear=True).create(venv_dir)
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", *SUITE_PACKAGES],
        check=True,
        timeout=PIP_TIMEOUT_S,
    )
    marker.write_text(wanted)
    return python


@contextlib.contextmanager
def started(name: str, nodes: int, rillet_toml: str = "") -> Iterator[str]:
    """The Kafka listener (host:port) of one node of target ``name`` (``nodes`` nodes),
    started here and always stopped; ``rillet_toml`` ends every rillet node's config."""
    if name == "rillet":
        with tempfile.TemporaryDirectory(prefix="rillet-kpy-suite-") as tmp:
            plan = plan_cluster(
                Path(tmp),
                nodes,
                auto_create_topics=True,
                num_partitions=SUITE_PARTITIONS,
                super_users=EVERYONE,
                extra_config=rillet_toml,  # after the [quorum] table: tables of its own
            )
            with LocalCluster(plan, log_level="WARNING") as cluster:
                cluster.start()
                yield plan.nodes[0].kafka_bootstrap
        return
    if nodes == 1:
        with RealKafka(ensure_jars(), properties=KAFKA_SUITE_PROPERTIES) as kafka:
            yield kafka.bootstrap
        return
    # Several KRaft controllers must authorize each other's votes before the authorizer has
    # loaded the ACLs: Kafka refuses them (AuthorizerNotReady) unless they are super users.
    properties = {**KAFKA_SUITE_PROPERTIES, "super.users": EVERYONE}
    cluster = RealKafkaCluster(ensure_jars(), nodes, properties=properties, jvm="test")
    with cluster:
        yield cluster.members[0].bootstrap


def run_suite(
    python: Path, checkout: Path, bootstrap: str, junit: Path, timeout_s: int, select: str
) -> None:
    env = {
        **os.environ,
        "KAFKA_VERSION": SUITE_KAFKA_VERSION,
        "KAFKA_URI": f"kafka://{bootstrap}",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    env.pop("PYTHONPATH", None)  # the suite imports the checkout's kafka, not ours
    with tempfile.TemporaryDirectory(prefix="kpy-suite-root-") as root:
        env["KAFKA_ROOT"] = root
        argv = [
            str(python),
            "-m",
            "pytest",
            "test/integration",
            "-o",
            "addopts=",
            f"--timeout={timeout_s}",
            "-p",
            "no:cacheprovider",
            "-q",
            f"--junitxml={junit}",
        ]
        if select:
            argv += ["-k", select]
        with open(junit.with_suffix(".log"), "wb") as log:
            subprocess.run(
                argv,
                cwd=checkout,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=SUITE_TIMEOUT_S,
                check=False,
            )


def main() -> int:
    import argparse

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("checkout", type=Path, help="kafka-python's repository at tag 3.0.11")
    p.add_argument("--targets", default=",".join(TARGETS), help="comma-separated: rillet,kafka")
    p.add_argument("--rillet-nodes", type=int, default=RILLET_NODES)
    p.add_argument("--kafka-nodes", type=int, default=KAFKA_NODES)
    p.add_argument(
        "--rillet-toml",
        default="",
        help="TOML tables added to every rillet node's config, e.g. '[log]\\n"
        "segment_bytes = 1048576' (no longer needed for the suite's 1970 timestamps: any past "
        "time is accepted by default, as Kafka does)",
    )
    p.add_argument("--timeout", type=int, default=45, help="per test, seconds (pytest-timeout)")
    p.add_argument("-k", dest="select", default="", help="pytest -k expression (a subset)")
    p.add_argument("--json", type=Path, help="the per-test JSON (default: in --out-dir)")
    p.add_argument("--out-dir", type=Path, help="keep the JUnit XML and suite logs here")
    args = p.parse_args()
    checkout = args.checkout.expanduser().resolve()
    if not (checkout / "test" / "service.py").exists():
        print(f"skipped: {checkout} is not a kafka-python checkout (no test/service.py)")
        return 0
    python = suite_python(cache_root() / "kafka-python-suite-venv")
    out_dir = args.out_dir or Path(tempfile.mkdtemp(prefix="kpy-suite-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    runs: dict[str, dict[str, dict[str, str]]] = {}
    skipped: dict[str, str] = {}
    for name in args.targets.split(","):
        if name not in TARGETS:
            sys.exit(f"unknown target {name!r} (choose from {', '.join(TARGETS)})")
        nodes = args.rillet_nodes if name == "rillet" else args.kafka_nodes
        label = f"{name}-{nodes}"  # the table's column: rillet-3, kafka-1
        junit = out_dir / f"{label}.xml"
        try:
            with started(name, nodes, args.rillet_toml) as bootstrap:
                print(f"{label}: running the suite against {bootstrap}", file=sys.stderr)
                run_suite(python, checkout, bootstrap, junit, args.timeout, args.select)
        except KafkaUnavailable as exc:  # no Java, Maven or Maven Central: skip, say why
            skipped[label] = str(exc)
            print(f"{label}: skipped: {exc}", file=sys.stderr)
            continue
        runs[label] = outcomes(junit)
        print(f"{label}: {counts(runs[label])} (log: {junit.with_suffix('.log')})", file=sys.stderr)
    print(table(runs), file=sys.stderr)
    result: dict[str, Any] = {
        "counts": {name: counts(run) for name, run in runs.items()},
        "differences": differences(runs) if len(runs) > 1 else {},
        "skipped_targets": skipped,
    }
    json_path = args.json or out_dir / "kafka_python_suite.json"
    json_path.write_text(json.dumps({**result, "tests": runs}, indent=1) + "\n")
    print(f"per-test results: {json_path}", file=sys.stderr)
    params = {
        "checkout": str(checkout),
        "targets": args.targets,
        "rillet_nodes": args.rillet_nodes,
        "kafka_nodes": args.kafka_nodes,
        "rillet_toml": args.rillet_toml,
        "timeout_s": args.timeout,
    }
    emit("kafka_python_suite", params | {"select": args.select}, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
