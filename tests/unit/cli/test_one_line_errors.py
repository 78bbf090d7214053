"""User mistakes end in one line and a usage or start-up exit status, never a traceback:
``--version``, a bad ``--log-level``, out-of-range node settings, a port in use, an unusable
data directory, and a reader that closes the pipe (``| head``)."""

from __future__ import annotations

import argparse
import errno
import subprocess
from pathlib import Path

import pytest

from rillet.broker.config import NodeConfig, load_config
from rillet.broker.errors import ConfigError
from rillet.cli import build_info, node_command
from rillet.cli import main as cli_main
from rillet.cli.common import EXIT_BROKEN_PIPE, write_all


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli_main.main(["--version"])
    assert info.value.code == 0
    printed = capsys.readouterr().out.strip()
    assert printed == build_info.version_line()
    assert build_info.release_version() != "unknown"  # installed with pip install -e
    commit = git_head_short()
    if commit:  # a git checkout: the commit is the checkout's (a dirty tree says so)
        assert printed.startswith(f"rillet {build_info.release_version()} (commit {commit}")


@pytest.mark.parametrize("level", ["debug", "INFO", "Warning", "error"])
def test_log_level_in_any_case(level: str) -> None:
    args = cli_main.build_parser().parse_args(["--log-level", level, "topics", "list"])
    assert args.log_level == level.upper()


def test_bad_log_level_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli_main.main(["--log-level", "loud", "topics", "list"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "--log-level: expected one of DEBUG, INFO, WARNING, ERROR, got 'loud'" in err
    assert "Traceback" not in err


def test_broken_pipe_exits_141_quietly(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def closed_pipe(args: argparse.Namespace) -> int:
        raise BrokenPipeError

    silenced: list[bool] = []
    monkeypatch.setattr(cli_main, "silence_stdout", lambda: silenced.append(True))
    parser = cli_main.build_parser()
    parsed = argparse.Namespace(log_level="INFO", run=closed_pipe)
    monkeypatch.setattr(parser, "parse_args", lambda argv: parsed)
    monkeypatch.setattr(cli_main, "build_parser", lambda: parser)
    assert cli_main.main(["topics", "list"]) == EXIT_BROKEN_PIPE == 141
    assert silenced == [True]
    assert capsys.readouterr().err == ""


# -- node settings: range checks at start -------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[listener]\nport = 65536\n", "listener.port must be 0..65535 (0: ephemeral), got 65536"),
        ("[listener]\nport = -1\n", "listener.port must be 0..65535"),
        ("[quorum]\nraft_port = 70000\n", "quorum.raft_port must be 0..65535"),
        ("[limits]\nmax_connections = 0\n", "limits.max_connections must be >= 1, got 0"),
        ("[limits]\nmax_fetch_wait_ms = -5\n", "limits.max_fetch_wait_ms must be >= 0, got -5"),
        ("[limits]\nmax_frame_bytes = -1\n", "limits.max_frame_bytes must be >= 1, got -1"),
        ("[replication]\nfetch_backoff_ms = -1\n", "replication.fetch_backoff_ms must be >= 0"),
        ("[quorum]\nrequest_timeout_ms = 0\n", "quorum.request_timeout_ms must be >= 1"),
        (
            "[topics]\ndefault_replication_factor = 0\n",
            "topics.default_replication_factor must be >= 1",
        ),
        ("[tasks]\nlog_scrub_interval_ms = -2\n", "log_scrub_interval_ms must be >= 0 (or -1)"),
        ("node_id = -3\n", "node_id must be >= 0, got -3"),
    ],
)
def test_out_of_range_settings_are_refused_by_name(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "node.toml"
    f.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(f)
    assert message in str(info.value)


@pytest.mark.parametrize(
    "text",
    [
        "[listener]\nport = 0\n",
        "[listener]\nport = 65535\n",
        "[log]\nretention_ms = -1\nretention_bytes = -1\nflush_ms = -1\n",
        "[tasks]\nlog_scrub_interval_ms = -1\n",
        "[limits]\nmax_fetch_wait_ms = 0\n",
    ],
)
def test_documented_edges_are_accepted(tmp_path: Path, text: str) -> None:
    f = tmp_path / "node.toml"
    f.write_text(text)
    load_config(f)


def test_port_override_out_of_range_exits_2_naming_the_key(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    code = cli_main.main(["node", "--port", "70000", "--data-dir", str(tmp_path / "d")])
    assert code == 2
    assert "listener.port must be 0..65535" in caplog.text
    assert not (tmp_path / "d").exists()  # refused before anything was touched


# -- node: OS errors at start --------------------------------------------------------------


def test_port_in_use_line_names_the_ports() -> None:
    line = node_command.os_error_line(OSError(errno.EADDRINUSE, "Address in use"), NodeConfig())
    assert line == "address already in use: another process holds a port (listener.port 9092)"


@pytest.mark.parametrize("code", [errno.EROFS, errno.EACCES, errno.ENOTDIR, errno.ENOSPC])
def test_unusable_data_dir_line(code: int) -> None:
    exc = OSError(code, "nope", "rillet-data/.lock")
    line = node_command.os_error_line(exc, NodeConfig())
    assert line == "data_dir rillet-data is not usable (rillet-data/.lock): nope"


def test_data_dir_under_a_file_is_one_line_and_exit_2(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    code = cli_main.main(["node", "--port", "0", "--data-dir", str(blocker / "d")])
    assert code == 2
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1
    assert errors[0].getMessage().startswith(f"data_dir {blocker / 'd'} is not usable")
    assert errors[0].exc_info is None


def test_write_all_raises_when_the_reader_left_mid_write() -> None:
    """A short write into a closed pipe used to drop the rest silently (exit 0 under head)."""
    import os
    import threading

    read_fd, write_fd = os.pipe()
    out = os.fdopen(write_fd, "w", encoding="utf-8")

    def reader() -> None:  # like `head -1`: one read, then gone
        os.read(read_fd, 10)
        os.close(read_fd)

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        with pytest.raises(BrokenPipeError):
            write_all(out, "record\n" * 200_000)  # over any pipe buffer
    finally:
        thread.join()
        try:
            out.close()
        except BrokenPipeError:
            pass


def test_write_all_to_a_text_buffer() -> None:
    import io

    buffer = io.StringIO()
    write_all(buffer, "a\n")
    assert buffer.getvalue() == "a\n"


def test_refused_and_busy_have_distinct_lines() -> None:
    from rillet.cli.common import error_line
    from rillet.client.errors import (
        ClientTimeoutError,
        ConnectionFailedError,
        TopicAlreadyExistsError,
    )

    refused = error_line(ConnectionFailedError("no node reachable: cannot connect to h:1"))
    assert refused.startswith("error: ConnectionFailedError: no node reachable")
    assert refused.endswith(
        "(connections refused: is the cluster running, and is --bootstrap right?)"
    )
    busy = error_line(ClientTimeoutError("no response from h:1 within 30s"))
    assert "nodes busy: the connection was accepted but not answered in time" in busy
    plain = error_line(TopicAlreadyExistsError("topic 't' exists"))
    assert plain == "error: TopicAlreadyExistsError: topic 't' exists"
    assert "\n" not in refused + busy


def git_head_short() -> str:
    """The test tree's own commit (12 hex digits), or "" outside a git checkout."""
    done = subprocess.run(
        ["git", "-C", str(Path(__file__).parent), "rev-parse", "--short=12", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() if done.returncode == 0 else ""
