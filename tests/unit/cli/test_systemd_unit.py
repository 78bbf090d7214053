"""The systemd unit shipped in packaging/ stays a valid way to run a node.

The unit is text nobody runs in CI, so it rots silently: these checks tie it to the code it
names (the command line parses as ``rillet node``, the exit status it refuses to restart on is
the one a configuration mistake gives, the stop signal is one the node handles)."""

from __future__ import annotations

import configparser
import shlex
import signal
from pathlib import Path

from rillet.cli import main as cli_main
from rillet.cli import node_command

UNIT = Path(__file__).resolve().parents[3] / "packaging" / "systemd" / "rillet-node.service"


def service_section() -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read_string(UNIT.read_text())
    assert {"Unit", "Service", "Install"} <= set(parser.sections())
    return parser["Service"]


def test_exec_start_is_a_rillet_node_command_line() -> None:
    program, *argv = shlex.split(service_section()["ExecStart"])
    assert Path(program).name == "rillet"
    args = cli_main.build_parser().parse_args(argv)
    assert args.command == "node"
    assert str(args.config) == "/etc/rillet/node.toml"
    assert args.ready_file is not None


def test_a_configuration_mistake_is_not_restarted_and_stop_is_the_controlled_shutdown() -> None:
    service = service_section()
    assert int(service["RestartPreventExitStatus"]) == node_command.EXIT_START_FAILED
    assert service["Restart"] == "on-failure"
    assert getattr(signal, service["KillSignal"]) in (signal.SIGTERM, signal.SIGINT)
    assert int(service["TimeoutStopSec"]) >= 30
