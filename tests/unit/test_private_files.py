"""Owner-only files and directories: secrets are 0600 from the moment they exist, and
``tighten`` narrows a tree an older version left open (without following links out)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from rillet.launcher.private_files import is_private, private_dir, tighten, write_private


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """A process umask that hides nothing: modes come from the code alone."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def test_a_secret_is_0600_even_under_an_open_umask(tmp_path: Path, open_umask: None) -> None:
    path = write_private(tmp_path / "secret", "s3cret\n")
    assert mode(path) == 0o600 and path.read_text() == "s3cret\n"


def test_rewriting_a_readable_file_narrows_it_first(tmp_path: Path) -> None:
    path = tmp_path / "client.properties"
    path.write_text("old, longer content\n")
    path.chmod(0o644)
    write_private(path, b"new\n")
    assert mode(path) == 0o600 and path.read_text() == "new\n"


def test_private_dir_makes_and_narrows(tmp_path: Path, open_umask: None) -> None:
    made = private_dir(tmp_path / "a")
    assert mode(made) == 0o700
    existing = tmp_path / "b"
    existing.mkdir(mode=0o755)
    private_dir(existing)
    assert mode(existing) == 0o700


def test_tighten_narrows_a_tree_and_counts_what_it_changed(tmp_path: Path) -> None:
    root = tmp_path / "data"
    (root / "__raft" / "raft").mkdir(parents=True)
    for d in (root, root / "__raft", root / "__raft" / "raft"):
        d.chmod(0o755)
    (root / "__raft" / "raft" / "hard-state").write_text("x")
    (root / "__raft" / "raft" / "hard-state").chmod(0o644)
    write_private(root / "already", "x")
    outside = tmp_path / "elsewhere"
    outside.write_text("not ours")
    outside.chmod(0o644)
    (root / "link").symlink_to(outside)
    assert tighten(root) == 4  # three directories and one file
    assert all(is_private(p) for p in (root, root / "__raft", root / "__raft" / "raft"))
    assert mode(root / "__raft" / "raft" / "hard-state") == 0o600
    assert mode(outside) == 0o644  # a link is not followed out of the tree
    assert tighten(root) == 0


def test_a_private_root_is_not_walked(tmp_path: Path) -> None:
    """Nobody else can reach below a 0700 directory: a node's start-up pays one stat."""
    root = private_dir(tmp_path / "data")
    (root / "segment").write_text("x")
    (root / "segment").chmod(0o644)
    assert tighten(root) == 0 and mode(root / "segment") == 0o644
