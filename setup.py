"""Build hook: stamp the commit a wheel or sdist is built from into the package.

Everything else about the build is declared in pyproject.toml; this file only adds the
``rillet/cli/build_commit`` resource that ``rillet --version`` reads (cli/build_info.py), so a
user who installed a wheel can say exactly which tree it came from.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

RESOURCE = Path("rillet") / "cli" / "build_commit"
SOURCE_RESOURCE = Path("cli") / "build_commit"


def _build_info() -> ModuleType:
    """cli/build_info.py loaded by its path: an isolated build cannot import the package,
    and asking git is that module's job, not a second copy's."""
    path = Path("cli") / "build_info.py"
    spec = importlib.util.spec_from_file_location("rillet_build_info", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def current_commit() -> str:
    """The checkout's commit, or what an sdist already carries, or "unknown"."""
    info = _build_info()
    commit = str(info._git_commit(Path.cwd()))
    if commit:
        return commit
    if SOURCE_RESOURCE.exists():  # building a wheel from an unpacked sdist
        return SOURCE_RESOURCE.read_text().strip() or str(info.UNKNOWN)
    return str(info.UNKNOWN)


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
