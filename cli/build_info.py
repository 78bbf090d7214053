"""Which build of rillet is running: the release version and the commit it was built from.

An operator who reports a problem, or pins a version across a rolling upgrade, needs both:
the version says which release, the commit says which exact tree (a wheel built between two
tags has the next version's number but not its code). A wheel or sdist carries the commit in
a small resource file written at build time (``setup.py``); an editable install from a git
checkout asks git; anything else says "unknown" rather than guessing.
"""

from __future__ import annotations

import subprocess
from importlib import metadata, resources
from pathlib import Path

BUILD_COMMIT_RESOURCE = "build_commit"
GIT_TIMEOUT_S = 2.0
UNKNOWN = "unknown"


def release_version() -> str:
    """The installed distribution's version (pyproject.toml), or "unknown" from a bare tree."""
    try:
        return metadata.version("rillet")
    except metadata.PackageNotFoundError:
        return UNKNOWN


def build_commit() -> str:
    """The commit this build came from: the packaged resource first, then git, else unknown."""
    packaged = _packaged_commit()
    if packaged:
        return packaged
    return _git_commit(Path(__file__).resolve().parent) or UNKNOWN


def version_line() -> str:
    """What ``rillet --version`` prints, e.g. ``rillet 0.2.0 (commit 1a2b3c4d5e6f)``."""
    return f"rillet {release_version()} (commit {build_commit()})"


def _packaged_commit() -> str:
    try:
        text = resources.files("rillet.cli").joinpath(BUILD_COMMIT_RESOURCE).read_text()
    except (FileNotFoundError, OSError, ModuleNotFoundError):
        return ""
    return text.strip()


def _git_commit(directory: Path) -> str:
    """The short commit of the checkout holding ``directory`` (a dirty tree gets "+dirty")."""
    try:
        head = subprocess.run(
            ["git", "-C", str(directory), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
        if head.returncode != 0:
            return ""
        status = subprocess.run(
            ["git", "-C", str(directory), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    commit = head.stdout.strip()
    dirty = status.returncode == 0 and bool(status.stdout.strip())
    return f"{commit}+dirty" if dirty else commit
