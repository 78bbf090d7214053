"""The previous tagged release, built once into a venv cached outside the repository.

``git archive <tag>`` of this checkout is installed (with its dependencies, from pip's
cache or index) into ``~/.cache/rillet/releases/<tag>/venv`` (``RILLET_CACHE_DIR``
moves the cache). Built in a temporary directory and renamed into place, so an interrupted
build is never taken for a finished one. When the tag or the build is not available, the
tests that need it skip, with the reason.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from real_kafka import cache_root

PREVIOUS_RELEASE = "v0.1.0"
BUILD_TIMEOUT_S = 600.0
REPO = Path(__file__).resolve().parents[2]


class ReleaseUnavailable(Exception):
    """The previous release cannot be built here; the message says why, in one line."""


def previous_release_python(tag: str = PREVIOUS_RELEASE) -> Path:
    """The interpreter of a venv where release ``tag`` of rillet is installed (run it as
    ``python -m rillet.cli.main``: the venv was built under another name, so its scripts'
    first lines name a path that no longer exists)."""
    home = cache_root() / "releases" / tag
    python = home / "venv" / "bin" / "python"
    if python.exists():
        return python
    home.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=home) as tmp:
        tree, venv = Path(tmp) / f"rillet-{tag}", Path(tmp) / "venv"
        tree.mkdir()
        _extract(tag, tree)
        _run("creating the venv", [sys.executable, "-m", "venv", str(venv)])
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
        _run("upgrading pip", [*pip, "--upgrade", "pip"])  # an old pip cannot build it
        _run(f"installing {tag}", [*pip, str(tree)])
        shutil.rmtree(home / "venv", ignore_errors=True)
        venv.rename(home / "venv")
    return python


def _extract(tag: str, tree: Path) -> None:
    """The files of ``tag`` into ``tree`` (``git archive``, unpacked without a shell)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(REPO), "archive", "--format=tar", tag],
            capture_output=True,
            timeout=BUILD_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ReleaseUnavailable(f"git archive of {tag} failed: {exc}") from None
    if done.returncode != 0:
        last = (done.stderr.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
        raise ReleaseUnavailable(f"git archive of {tag} failed: {last}")
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as archive:
        archive.extractall(tree, filter="data")


def _run(what: str, argv: list[str]) -> None:
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, env=env, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ReleaseUnavailable(f"{what} failed: {exc}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ReleaseUnavailable(f"{what} failed: {last}")
