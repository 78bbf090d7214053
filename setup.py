"""Build hook: stamp the commit a wheel or sdist is built from into the package.

Everything else about the build is declared in pyproject.toml; this file only adds the
``rillet/cli/build_commit`` resource that ``rillet --version`` reads (cli/build_info.py), so a
user who installed a wheel can say exactly which tree it came from.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

RESOURCE = Path("rillet") / "cli" / "build_commit"
SOURCE_RESOURCE = Path("cli") / "build_commit"


def current_commit() -> str:
    """The checkout's commit, or what an sdist already carries, or "unknown"."""
    try:
        result = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        result = None
    if result is not None and result.returncode == 0 and result.stdout.strip():
        return result.stdout.strip()
    if SOURCE_RESOURCE.exists():  # building a wheel from an unpacked sdist
        return SOURCE_RESOURCE.read_text().strip() or "unknown"
    return "unknown"


class BuildPyWithCommit(build_py):
    def run(self) -> None:
        super().run()
        if not self.editable_mode:
            target = Path(self.build_lib) / RESOURCE
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(current_commit() + "\n")


class SdistWithCommit(sdist):
    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        super().make_release_tree(base_dir, files)
        (Path(base_dir) / SOURCE_RESOURCE).write_text(current_commit() + "\n")


setup(cmdclass={"build_py": BuildPyWithCommit, "sdist": SdistWithCommit})
