"""The client-side ``rillet`` commands as a user runs them: subprocesses against a real node.

Complements test_cli_and_blocking.py (the basic topics/produce/consume round trip) with the
options people script against: partition and offset selection, idle timeouts, keys and
headers from stdin, the describe table's offsets, perf --json output, the demo against a
running node, and clean one-line errors.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from node_process import NodeProcess

from rillet.cli.topics_command import TABLE_HEADER
from rillet.launcher.local_node import NodeStartError, start_node

pytestmark = pytest.mark.integration


def rillet(node: NodeProcess, command: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """Run ``rillet <command> --bootstrap <node>``; ``command`` is split like a shell would."""
    argv = [*shlex.split(command), "--bootstrap", node.bootstrap]
    return subprocess.run(
        [sys.executable, "-m", "rillet.cli.main", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def test_produce_and_consume_by_partition_and_offset(node: NodeProcess) -> None:
    ok(rillet(node, "topics create orders --partitions 2"))
    assert "orders" in ok(rillet(node, "topics list")).split()
    lines = "".join(f"value-{i}\n" for i in range(20))
    produced = rillet(node, "produce orders --partition 1 --acks 1", stdin=lines)
    assert "produced 20 of 20 records" in produced.stderr
    ok(produced)

    everything = rillet(
        node, "consume orders --from-beginning --max-messages 20 --print-offset --key-separator ' '"
    )
    assert ok(everything).splitlines() == [f"1:{i} value-{i}" for i in range(20)]

    tail = rillet(node, "consume orders --partition 1 --offset 15 --timeout-ms 500")
    assert ok(tail).splitlines() == [f"value-{i}" for i in range(15, 20)]

    empty = rillet(node, "consume orders --partition 0 --from-beginning --timeout-ms 300")
    assert ok(empty) == "" and "consumed 0 records" in empty.stderr

    table = ok(rillet(node, "topics describe orders")).splitlines()
    assert table[0].split() == list(TABLE_HEADER)
    rows = {row.split()[1]: row.split() for row in table[1:]}
    assert rows["0"][-2:] == ["0", "0"] and rows["1"][-2:] == ["0", "20"]


def test_keys_and_headers_from_stdin(node: NodeProcess) -> None:
    ok(rillet(node, "topics create keyed --partitions 3"))
    stdin = "".join(f"user-{i % 4}=click {i}\n" for i in range(40)) + "no separator"
    ok(rillet(node, "produce keyed --key-separator = --header src=cli", stdin=stdin))
    out = ok(
        rillet(
            node,
            "consume keyed --from-beginning --max-messages 41 --print-offset "
            "--print-headers --print-key",
        )
    )
    partitions_of: dict[str, set[str]] = {}
    for line in out.splitlines():
        where, headers, key, _value = line.split("\t")
        assert headers == "src=cli"
        partitions_of.setdefault(key, set()).add(where.split(":")[0])
    assert set(partitions_of) == {"user-0", "user-1", "user-2", "user-3", ""}
    assert all(len(p) == 1 for k, p in partitions_of.items() if k)  # a key stays put


def test_errors_are_one_line_and_exit_1(node: NodeProcess) -> None:
    for command in (
        "consume missing --timeout-ms 100",
        "topics describe missing",
        "topics delete missing",
    ):
        result = rillet(node, command)
        assert result.returncode == 1, command
        assert "UnknownTopicOrPartitionError" in result.stderr
        assert "Traceback" not in result.stderr
    ok(rillet(node, "topics create one --partitions 1"))
    bad_partition = rillet(node, "produce one --partition 3", stdin="x\n")
    assert bad_partition.returncode == 1 and "Traceback" not in bad_partition.stderr
    assert rillet(node, "consume one --offset 1").returncode == 2  # needs --partition


def test_perf_commands_print_one_json_line(node: NodeProcess) -> None:
    ok(rillet(node, "topics create perf --partitions 2"))
    produced = rillet(node, "perf produce --topic perf --num-records 20000 --record-size 50 --json")
    figures = json.loads(ok(produced))
    assert figures["num_records"] == 20000 and figures["records_per_s"] > 0
    assert figures["latency_ms"]["samples"] >= 1 and figures["latency_ms"]["p99"] > 0
    consumed = rillet(node, "perf consume --topic perf --num-records 20000 --json")
    figures = json.loads(ok(consumed))
    assert figures["records"] == 20000 and figures["complete"]
    assert figures["value_bytes"] == 20000 * 50
    human = ok(rillet(node, "perf produce --topic perf --num-records 100 --throughput 1000"))
    assert "100 records sent" in human and "99.9th" in human


def test_demo_against_a_running_node(node: NodeProcess) -> None:
    first = ok(rillet(node, "demo --records 300"))
    assert "created topic demo" in first and "demo OK" in first
    again = ok(rillet(node, "demo --records 30"))
    assert "exists already" in again and "demo OK" in again


def test_local_node_start_failure_names_the_cause(tmp_path: Path) -> None:
    with pytest.raises(NodeStartError, match="exited with status"):
        start_node(tmp_path / "work", config_text="no_such_key = 1\n", ready_timeout_s=20)


BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.parametrize(
    ("script", "args"),
    [
        ("produce_throughput.py", "--num-records 3000"),
        ("consume_throughput.py", "--num-records 3000"),
        ("e2e_latency.py", "--rate 2000 --seconds 0.5"),
    ],
)
def test_bench_scripts_print_one_json_line(node: NodeProcess, script: str, args: str) -> None:
    """Tiny runs: the scripts keep working as the client evolves (figures are not checked)."""
    result = subprocess.run(
        [sys.executable, str(BENCH / script), *shlex.split(args), "--bootstrap", node.bootstrap],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    (line,) = result.stdout.splitlines()
    figures = json.loads(line)
    assert figures["bench"] == script.removesuffix(".py")
    assert figures["host"]["nproc"] >= 1 and figures["params"]["bootstrap"] == node.bootstrap
    if script == "e2e_latency.py":
        assert figures["sent"] == figures["received"] == 1000
        assert figures["latency_ms"]["p99"] > 0
    else:
        assert figures["records_per_s"] > 0
