"""``rillet chaos``: argument parsing, the replay command, and the commands that need no cluster.

The parser is built here from ``chaos_command.register`` alone, so these tests do not depend
on the command being listed in main.py.
"""

from __future__ import annotations

import argparse
import shlex
from dataclasses import replace
from pathlib import Path

import pytest

from rillet.chaos.runner import RunConfig, replay_command, schedule_for
from rillet.cli import chaos_command


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="rillet")
    sub = p.add_subparsers(dest="command", required=True)
    chaos_command.register(sub)
    return p


def parse(*argv: str) -> argparse.Namespace:
    return parser().parse_args(list(argv))


def usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as exc_info:
        parse(*argv)
    assert exc_info.value.code == 2
    return capsys.readouterr().err


def test_defaults_make_the_default_config() -> None:
    assert chaos_command.config_from(parse("chaos", "run")) == RunConfig()


def test_options_reach_the_config() -> None:
    args = parse(
        "chaos", "run", "--nodes", "5", "--duration", "30", "--seed", "9",
        "--faults", "pause,kill-any", "--partitions", "4", "--rate", "50", "--members", "0",
        "--windows", "1,2", "--gaps", "0.5,1", "--out", "/tmp/x", "--max-down", "2",
    )  # fmt: skip
    config = chaos_command.config_from(args)
    assert config == RunConfig(
        seed=9, nodes=5, duration_s=30, faults=("pause", "kill-any"), partitions=4, rate=50,
        members=0, windows=(1.0, 2.0), gaps=(0.5, 1.0), out_dir=Path("/tmp/x"), max_down=2,
    )  # fmt: skip


@pytest.mark.parametrize(
    "config",
    [
        RunConfig(),
        RunConfig(seed=17, nodes=5, duration_s=90, faults=("pause",), rate=12.5),
        RunConfig(max_down=3, allow_majority=True, windows=(1, 2), out_dir=Path("/tmp/c")),
        RunConfig(churn=False, members=0, producers=1, min_insync=1, gaps=(0, 0.5)),
        RunConfig(network="kernel", engine="pysyncobj", faults=("partition", "degrade")),
        RunConfig(client="kafka", seed=4),
    ],
)
def test_the_replay_command_parses_back_to_the_same_config(config: RunConfig) -> None:
    argv = shlex.split(replay_command(config))
    assert argv[:3] == ["rillet", "chaos", "run"]
    assert chaos_command.config_from(parse(*argv[1:])) == config


def test_unknown_fault_kinds_and_partitions_on_pysyncobj_are_usage_errors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert "unknown fault kinds" in usage_error(capsys, "chaos", "run", "--faults", "explode")
    args = parse("chaos", "run", "--faults", "partition", "--engine", "pysyncobj")
    assert args.run(args) == 2
    assert "identifies peers by address" in capsys.readouterr().err
    assert "MIN,MAX" in usage_error(capsys, "chaos", "run", "--windows", "a,b")
    assert "MIN <= MAX" in usage_error(capsys, "chaos", "run", "--gaps", "3,1")


def test_kernel_only_faults_need_the_kernel_network(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = parse("chaos", "run", "--faults", "degrade")
    assert args.run(args) == 2
    assert "need --network kernel" in capsys.readouterr().err
    # With real addresses pysyncobj can be partitioned too; without namespaces, one line.
    monkeypatch.setattr(
        chaos_command, "kernel_network_unavailable", lambda: "network namespaces need root"
    )
    args = parse(
        "chaos",
        "run",
        "--network",
        "kernel",
        "--faults",
        "partition,degrade",
        "--engine",
        "pysyncobj",
    )
    assert args.run(args) == 2
    assert (
        capsys.readouterr().err
        == "error: --network kernel cannot run here: network namespaces need root\n"
    )


def test_the_default_faults_leave_out_the_kernel_only_kinds() -> None:
    assert "degrade" not in RunConfig().faults
    assert "degrade" not in parse("chaos", "run", "--faults", "all").faults
    assert parse("chaos", "run", "--faults", "all,degrade").faults == (
        *RunConfig().faults,
        "degrade",
    )


def test_a_majority_down_needs_allow_majority(capsys: pytest.CaptureFixture[str]) -> None:
    args = parse("chaos", "run", "--max-down", "2")
    assert args.run(args) == 2
    assert "--allow-majority" in capsys.readouterr().err
    args = parse("chaos", "schedule", "--max-down", "2", "--allow-majority")
    assert args.run(args) == 0


def test_schedule_prints_the_seed_s_steps(capsys: pytest.CaptureFixture[str]) -> None:
    args = parse("chaos", "schedule", "--seed", "4", "--duration", "40")
    assert args.run(args) == 0
    out = capsys.readouterr().out
    steps = schedule_for(replace(RunConfig(), seed=4, duration_s=40)).steps
    assert out.startswith(f"seed 4: {len(steps)} faults, at most 1 down")
    assert all(s.describe() in out for s in steps)


def test_faults_lists_every_kind(capsys: pytest.CaptureFixture[str]) -> None:
    args = parse("chaos", "faults")
    assert args.run(args) == 0
    out = capsys.readouterr().out
    assert "kill-leader" in out and "restart-corrupt-tail" in out
    assert "partition" in out and "later" not in out


def test_check_needs_a_run_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = parse("chaos", "check", str(tmp_path))
    assert args.run(args) == 2
    assert "summary.json" in capsys.readouterr().err


def test_the_client_option_reaches_the_config_and_bad_clients_are_usage_errors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert chaos_command.config_from(parse("chaos", "run", "--client", "kafka")).client == "kafka"
    assert "invalid choice" in usage_error(capsys, "chaos", "run", "--client", "jms")


def test_the_kafka_client_without_confluent_kafka_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chaos_command, "kafka_clients_unavailable", lambda: "not installed")
    args = parse("chaos", "run", "--client", "kafka")
    assert args.run(args) == 2
    assert capsys.readouterr().err == "error: --client kafka cannot run here: not installed\n"


def test_a_harness_error_on_one_seed_does_not_end_the_sweep(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A sweep of 100 seeds once stopped at seed 53 (a port taken on a busy machine): the
    seed is named as a harness error and the sweep goes on."""
    tried: list[int] = []

    def run_once(config: RunConfig) -> object:
        tried.append(config.seed)
        raise RuntimeError("cluster did not start")

    monkeypatch.setattr(chaos_command, "run_once", run_once)
    status = chaos_command.run_run(parse("chaos", "run", "--seed", "5", "--seeds", "3"))
    assert status == 1 and tried == [5, 6, 7]
    out = capsys.readouterr()
    assert "harness errors (no verdict) on seed(s): 5, 6, 7" in out.out
