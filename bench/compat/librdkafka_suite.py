"""Run librdkafka's own test suite (tests 0000-0150, its default mode) against rillet and Kafka.

The suite encodes what librdkafka's code assumes of a broker: topic auto-creation, offsets,
groups, admin calls. This script fetches librdkafka v2.15.0's source from the npm registry
(``@confluentinc/kafka-javascript@1.10.0`` bundles exactly v2.15.0 under deps/librdkafka; no
``node-rdkafka`` release bundles 2.15), builds it once under ``~/.cache/rillet/`` (never in
the repository), and runs each test in a process of its own (``TESTS=0001 ./test-runner -Q
-p1 -L -E``: quick mode, broker tests only, no socket-emulation tests) with a deadline that
kills the whole runner. Targets, both set up as the suite's "default" scenario (topics
auto-created with 4 partitions): a local 3-node rillet cluster (Kafka listener on) and a
single-node Apache Kafka 4.4 (KRaft, from Maven Central's
jars, see tests/support/real_kafka.py). It prints a pass/fail/skip table with the
differences on stderr and one JSON line on stdout (and ``--out FILE``); when the source or
Kafka cannot be had it says why and exits 0 with ``"skipped"`` in the JSON.

    .venv/bin/python bench/compat/librdkafka_suite.py --target both --tests 0000-0150 \
        --out librdkafka-results.json
    # run a few tests again on rillet; the table keeps the earlier results of the others:
    .venv/bin/python bench/compat/librdkafka_suite.py --target rillet --tests 0011,0031 \
        --results librdkafka-results.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/ for _common
from _common import REPO, emit

from rillet.launcher.local_cluster import LocalCluster, plan_cluster

sys.path.insert(0, str(REPO / "tests" / "support"))  # the real Kafka launcher lives there
from real_kafka import (
    KAFKA_VERSION,
    TOOLS_ARTIFACT,
    KafkaUnavailable,
    RealKafka,
    cache_root,
    ensure_jars,
)
from real_kafka_cluster import RealKafkaCluster

NPM_PACKAGE = "@confluentinc/kafka-javascript@1.10.0"
LIBRDKAFKA_VERSION = "2.15.0"
CONFIGURE = [
    "--disable-gssapi",
    "--disable-curl",
    "--disable-zstd",
    "--disable-lz4-ext",
    "--disable-ssl",
]
DOWNLOAD_TIMEOUT_S = 300.0
BUILD_TIMEOUT_S = 1800.0
TEST_TIMEOUT_S = 300.0
RUNNER_FLAGS = ["-Q", "-p1", "-L", "-E"]
BUILT_MARKER = ".built"
RILLET_NODES = 3
SCENARIO_PARTITIONS = 4
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# a summary row of test-runner: "| 0001_multiobj | PASSED | 1.234s |"
ROW = re.compile(r"^\|\s*(\d{4})_(\S+)\s*\|\s*(\w+)\s*\|")
OUTCOME = {"PASSED": "pass", "FAILED": "fail", "RUNNING": "fail", "SKIPPED": "skip", "DNS": "skip"}


class SuiteUnavailable(Exception):
    """librdkafka's source cannot be had or built here; the message says why, in one line."""


def _run_logged(cmd: list[str], cwd: Path, log: Path, timeout_s: float) -> int:
    """Run ``cmd`` niced with its output appended to ``log``; kill its group on timeout."""
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            ["nice", "-n", "10", *cmd],
            cwd=cwd,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            return proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise SuiteUnavailable(f"{' '.join(cmd[:2])} took over {timeout_s:.0f}s") from None


def ensure_suite() -> Path:
    """librdkafka's tests/ directory with test-runner built, fetching and building if needed."""
    home = cache_root() / f"librdkafka-{LIBRDKAFKA_VERSION}"
    tests = home / "tests"
    if (home / BUILT_MARKER).exists():
        return tests
    for tool in ("npm", "make", "cc"):
        if shutil.which(tool) is None:
            raise SuiteUnavailable(f"{tool} is not on PATH (fetching or building librdkafka)")
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "configure").exists():
        tarball = _npm_pack(home.parent)
        with tarfile.open(tarball) as tar:
            prefix = "package/deps/librdkafka/"
            members = [m for m in tar.getmembers() if m.name.startswith(prefix)]
            for m in members:
                m.name = m.name.removeprefix(prefix)
            tar.extractall(home, members=[m for m in members if m.name], filter="data")
    log = home / "build.log"
    for cmd in (
        ["./configure", *CONFIGURE],
        ["make", "-j2", "libs"],
        ["make", "-j2", "-C", "tests", "build"],
    ):
        if _run_logged(cmd, home, log, BUILD_TIMEOUT_S) != 0:
            tail = log.read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
            raise SuiteUnavailable(f"{' '.join(cmd)} failed: {tail[0][:200]}")
    if not (tests / "test-runner").exists():
        raise SuiteUnavailable("the build left no tests/test-runner")
    (home / BUILT_MARKER).write_text(LIBRDKAFKA_VERSION)
    return tests


def _npm_pack(dest: Path) -> Path:
    """The npm tarball that bundles librdkafka's source, downloaded into ``dest`` once."""
    found = sorted(dest.glob("confluentinc-kafka-javascript-1.10.0.tgz"))
    if found:
        return found[0]
    try:
        done = subprocess.run(
            ["npm", "pack", NPM_PACKAGE, "--pack-destination", str(dest)],
            capture_output=True,
            timeout=DOWNLOAD_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise SuiteUnavailable(f"npm pack {NPM_PACKAGE} took too long") from None
    name = done.stdout.decode().strip().splitlines()[-1:] or [""]
    if done.returncode != 0 or not (dest / name[0]).is_file():
        why = (done.stderr.decode().strip().splitlines() or ["no output"])[-1]
        raise SuiteUnavailable(f"npm pack {NPM_PACKAGE} failed: {why[:200]}")
    return dest / name[0]


def suite_tests(tests: Path) -> dict[str, str]:
    """Number -> name of every test the runner knows (from its table in test.c)."""
    table = re.findall(r"_TEST\((\d{4})_(\w+)\s*,", (tests / "test.c").read_text())
    return dict(table)


def parse_selection(text: str) -> list[str]:
    """``0001-0050,0101`` -> the four-digit numbers it names."""
    out: list[str] = []
    for part in text.split(","):
        lo, _, hi = part.strip().partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()):
            raise argparse.ArgumentTypeError(f"a test range is NNNN or NNNN-NNNN, not {part!r}")
        out.extend(f"{n:04d}" for n in range(int(lo), int(hi or lo) + 1))
    return out


def run_one(
    tests: Path,
    number: str,
    conf: Path,
    log_dir: Path,
    broker_version: str | None = None,
    tools_env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Run test ``number`` in its own test-runner; its outcome, time and last lines.
    ``broker_version``: what the suite takes the broker to be (its default, 2.4.0.0, leaves
    out the sub-tests of newer features); ``tools_env``: KAFKA_PATH and BROKERS for the tests
    that run Kafka's command-line tools."""
    libs = f"{tests.parent / 'src'}:{tests.parent / 'src-cpp'}"  # the runner's own build
    env = {**os.environ, "TESTS": number, "RDKAFKA_TEST_CONF": str(conf), "LD_LIBRARY_PATH": libs}
    env.pop("TEST_KAFKA_VERSION", None)
    env.pop("KAFKA_VERSION", None)
    if broker_version is not None:
        env["TEST_KAFKA_VERSION"] = broker_version
    env.update(tools_env or {})
    log = log_dir / f"{number}.log"
    started = time.monotonic()
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            ["./test-runner", *RUNNER_FLAGS],
            cwd=tests,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            rc: int | None = proc.wait(TEST_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            rc = None
        finally:  # at the deadline, and on Ctrl-C or SIGTERM: the whole runner goes
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    verdict = judge(log.read_text(errors="replace"), number, rc)
    return {**verdict, "seconds": round(time.monotonic() - started, 1)}


def judge(output: str, number: str, rc: int | None) -> dict[str, Any]:
    """A test's outcome from its runner's output and exit status (None: killed at the
    deadline): the state in its summary row, failed whenever the runner did not exit 0
    (a crash or a hang after the row), and why it did not pass."""
    text = ANSI.sub("", output)
    state = None
    for line in text.splitlines():
        match = ROW.match(line)
        if match and match.group(1) == number:
            state = match.group(3)
    outcome = OUTCOME.get(state or "", "fail")
    if rc is None:
        outcome, state = "fail", "TIMEOUT"
    elif rc != 0:
        outcome = "fail"
    why = _reason(text.splitlines()) if outcome != "pass" else ""
    return {"outcome": outcome, "state": state or f"exit {rc}", "why": why}


def _reason(lines: list[str]) -> str:
    """The first failure the runner reported (its "### Test ... failed" line and the assertion
    after it), else the last skip or failure line, else the last line."""
    for i, line in enumerate(lines):
        if line.startswith("### Test") and "failed" in line:
            where = line.partition(" failed at ")[2].partition(" at ")[0]
            return f"{where}: {' '.join(lines[i + 1 : i + 2]).strip()}"[:300]
    marked = [ln for ln in lines if "SKIP" in ln or "FAIL" in ln]
    last = (marked or lines[-1:] or [""])[-1]
    return (last.rsplit("|", 1)[-1] if ROW.match(last) else last).strip()[:300]


@contextlib.contextmanager
def bootstrap_of(target: str, kafka_nodes: int = 1) -> Iterator[str]:
    """The Kafka bootstrap of a started target, stopped on exit (even on SIGTERM).

    Both are set up as the suite's "default" scenario (tests/scenarios/default.json):
    auto-creation on, 4 partitions and replication factor 3 for a topic nobody sized (a
    single Kafka broker gives replication factor 1: tests that ask for 3 fail there)."""
    with tempfile.TemporaryDirectory(prefix="rillet-librdkafka-") as tmp:
        if target == "rillet":
            plan = plan_cluster(
                Path(tmp),
                RILLET_NODES,
                default_replication_factor=RILLET_NODES,
                num_partitions=SCENARIO_PARTITIONS,
            )
            with LocalCluster(plan, log_level="WARNING") as cluster:
                cluster.start()
                print(f"started rillet, {RILLET_NODES} nodes", file=sys.stderr)
                yield plan.kafka_bootstrap
            return
        try:
            jars = ensure_jars()
        except KafkaUnavailable as exc:
            raise SuiteUnavailable(f"Kafka: {exc}") from None
        props = {"num.partitions": str(SCENARIO_PARTITIONS)}
        if kafka_nodes == 1:
            with RealKafka(jars, Path(tmp) / "kafka", properties=props, jvm="bench") as kafka:
                print(f"started Apache Kafka {KAFKA_VERSION}, 1 node", file=sys.stderr)
                yield kafka.bootstrap
            return
        with RealKafkaCluster(jars, kafka_nodes, Path(tmp) / "kafka", props) as cluster:
            print(f"started Apache Kafka {KAFKA_VERSION}, {kafka_nodes} nodes", file=sys.stderr)
            yield cluster.bootstrap


# The Kafka scripts some tests run (``$KAFKA_PATH/bin/<script>``), as wrappers around the
# tool classes of Kafka's tools jar (cached like the broker's jars, tests/support/real_kafka.py).
TOOL_SCRIPTS = {
    "kafka-topics.sh": "org.apache.kafka.tools.TopicCommand",
    "kafka-acls.sh": "org.apache.kafka.tools.AclCommand",
}


def kafka_tools(work: Path) -> Path | None:
    """A directory to use as KAFKA_PATH (its bin/ holds the scripts), None without the jars:
    the tests that need it then fail alike on both targets, saying KAFKA_PATH is not set."""
    try:
        jars = ensure_jars(artifact=TOOLS_ARTIFACT)
    except KafkaUnavailable as exc:
        print(f"no Kafka tools for KAFKA_PATH: {exc}", file=sys.stderr)
        return None
    home = work / "kafka-path"
    (home / "bin").mkdir(parents=True, exist_ok=True)
    for script, main in TOOL_SCRIPTS.items():
        path = home / "bin" / script
        path.write_text(
            "#!/bin/sh\nexec java -Xmx256m -XX:TieredStopAtLevel=1 -Dlog4j2.level=warn "
            f"-cp '{jars}/*' {main} \"$@\"\n"
        )
        path.chmod(0o755)
    return home


def run_target(
    target: str,
    tests: Path,
    numbers: list[str],
    work: Path,
    broker_version: str | None,
    kafka_nodes: int = 1,
) -> dict[str, dict[str, Any]]:
    work.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, Any]] = {}
    kafka_path = kafka_tools(work)
    with bootstrap_of(target, kafka_nodes) as bootstrap:
        conf = work / "test.conf"
        conf.write_text(f"bootstrap.servers={bootstrap}\n")
        tools_env = {"KAFKA_PATH": str(kafka_path), "BROKERS": bootstrap} if kafka_path else {}
        for number in numbers:
            results[number] = run_one(tests, number, conf, work, broker_version, tools_env)
            r = results[number]
            print(f"{target} {number} {r['outcome']} {r['seconds']}s {r['why']}", file=sys.stderr)
    return results


def table(names: dict[str, str], results: dict[str, dict[str, dict[str, Any]]]) -> str:
    """Markdown table: one row per test, each target's outcome, whether they differ, and
    what the runner said where a test did not pass (the first target's reason first)."""
    targets = list(results)
    head = "| test | " + " | ".join(targets) + " | differs | why not passed |"
    rows = [head, "|---" * (len(targets) + 3) + "|"]
    for n in sorted({n for r in results.values() for n in r}):
        got = [results[t].get(n, {}) for t in targets]
        outs = [g.get("outcome", "-") for g in got]
        differs = "**yes**" if len(set(outs)) > 1 and "-" not in outs else ""
        whys = [f"{t}: {g['why']}" for t, g in zip(targets, got, strict=True) if g.get("why")]
        why = " / ".join(dict.fromkeys(w.split(": ", 1)[1] for w in whys)) if whys else ""
        why = why.replace("|", "\\|")[:160]
        rows.append(f"| {n}_{names.get(n, '?')} | " + " | ".join(outs) + f" | {differs} | {why} |")
    return "\n".join(rows)


def summary(results: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for target, res in results.items():
        counts = {k: sum(1 for r in res.values() if r["outcome"] == k) for k in OUTCOME.values()}
        out[target] = counts
    if "kafka" in results and "rillet" in results:
        kafka_pass = [n for n, r in results["kafka"].items() if r["outcome"] == "pass"]
        both = [n for n in kafka_pass if results["rillet"].get(n, {}).get("outcome") == "pass"]
        out["kafka_passing"] = len(kafka_pass)
        out["rillet_passing_of_those"] = len(both)
        out["percent"] = round(100 * len(both) / len(kafka_pass), 1) if kafka_pass else None
        out["fail_on_rillet_only"] = sorted(set(kafka_pass) - set(both))
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tests", type=parse_selection, default=parse_selection("0000-0150"))
    p.add_argument("--target", choices=["rillet", "kafka", "both", "none"], default="both")
    p.add_argument(
        "--results",
        type=Path,
        action="append",
        help="the JSON of an earlier run (repeatable): its tests join the table, unless run "
        "again (by this run or a later --results)",
    )
    p.add_argument(
        "--broker-version",
        help="TEST_KAFKA_VERSION for the suite, e.g. 4.4.0 (default: the suite's own, 2.4.0.0)",
    )
    p.add_argument("--out", type=Path, help="also write the JSON line to this file")
    p.add_argument(
        "--kafka-nodes",
        type=int,
        default=1,
        help="Kafka brokers to start (default 1; the suite's own clusters have 3)",
    )
    p.add_argument("--markdown", type=Path, help="also write the table to this file")
    p.add_argument("--work-dir", type=Path, default=cache_root() / "librdkafka-runs")
    args = p.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop what it started
    params = {
        "tests": f"{args.tests[0]}-{args.tests[-1]}",
        "target": args.target,
        "broker_version": args.broker_version,
        "kafka_nodes": args.kafka_nodes,
    }
    try:
        tests = ensure_suite()
    except SuiteUnavailable as exc:
        print(f"skipped: {exc}", file=sys.stderr)
        emit("librdkafka_suite", params, {"skipped": str(exc)})
        return 0
    names = suite_tests(tests)
    numbers = [n for n in args.tests if n in names]
    results: dict[str, dict[str, dict[str, Any]]] = {}
    for earlier in args.results or []:  # tests measured before: a later run of one wins
        for target, measured in json.loads(earlier.read_text())["results"].items():
            results.setdefault(target, {}).update(measured)
    chosen = {"both": ("kafka", "rillet"), "none": ()}.get(args.target, (args.target,))
    for target in chosen:
        try:
            work = args.work_dir / target
            measured = run_target(
                target, tests, numbers, work, args.broker_version, args.kafka_nodes
            )
            results.setdefault(target, {}).update(measured)
        except SuiteUnavailable as exc:  # no Kafka here: say so, as a skip
            print(f"skipped {target}: {exc}", file=sys.stderr)
    text = table(names, results)
    print(text, file=sys.stderr)
    if args.markdown is not None:
        args.markdown.write_text(text + "\n")
    result = {"librdkafka": LIBRDKAFKA_VERSION, "summary": summary(results), "results": results}
    emit("librdkafka_suite", params, result)
    if args.out is not None:
        with open(args.out, "w") as out, contextlib.redirect_stdout(out):
            emit("librdkafka_suite", params, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
