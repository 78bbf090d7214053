"""Every package folder is installed under ``rillet.*`` and nothing is installed bare."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOP_LEVEL = [
    "wire",
    "partition_store",
    "raft",
    "metadata_quorum",
    "broker",
    "client",
    "spark_io",
    "chaos",
    "launcher",
    "cli",
]


def _pyproject() -> dict:  # type: ignore[type-arg]
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_package_folder_is_listed_in_pyproject() -> None:
    setuptools = _pyproject()["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    found = set()
    for top in TOP_LEVEL:
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT)
            found.add("rillet." + ".".join(rel.parts))
    assert found == listed, f"missing: {found - listed}, stale: {listed - found}"
    assert setuptools["package-dir"] == {f"rillet.{t}": t for t in TOP_LEVEL}


def test_packages_import_under_the_rillet_namespace() -> None:
    for top in TOP_LEVEL:
        module = importlib.import_module(f"rillet.{top}")
        assert Path(module.__file__ or "").resolve().parent == ROOT / top


def test_console_script_points_at_the_cli() -> None:
    assert _pyproject()["project"]["scripts"]["rillet"] == "rillet.cli.main:main"


def test_test_file_basenames_are_unique() -> None:
    """pytest imports test modules by basename (rootdir-relative packages are not used), so
    two test files of one name fail the whole run at collection."""
    tests = Path(__file__).resolve().parents[1]
    names = [p.name for p in tests.rglob("test_*.py")]
    assert sorted({n for n in names if names.count(n) > 1}) == []
