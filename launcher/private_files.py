"""Files and directories only their owner may use: secrets, keys and a node's data.

A secret must never sit in a file other local users can read, not even between a write and
a chmod: :func:`write_private` creates the file with mode 0600 (and narrows an existing
file's mode before writing anything), :func:`private_dir` makes directories 0700. A node's
data directory holds the Raft log, whose entries carry users' SCRAM salts and keys, so the
node narrows it at start-up with :func:`tighten` (a directory an older version left open).
Standard library only: the launcher, the CLI and the node all use it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

PRIVATE_FILE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700
# Group and other permission bits: none of them may be set on a private file or directory.
OTHERS_BITS = 0o077
# The node process's umask: what it creates is its owner's alone.
PRIVATE_UMASK = OTHERS_BITS


def private_dir(path: Path) -> Path:
    """``path`` as a directory only its owner may enter (made 0700 if missing, narrowed if
    it exists); missing parents are made with the process's default mode."""
    path.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    _narrow(path)
    return path


def write_private(path: Path, data: bytes | str) -> Path:
    """Create or replace ``path`` with ``data``, mode 0600 from the moment it exists."""
    raw = data.encode() if isinstance(data, str) else data
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(path, flags, PRIVATE_FILE_MODE)
    try:
        os.fchmod(fd, PRIVATE_FILE_MODE)  # an existing file keeps its mode through O_CREAT
        view = memoryview(raw)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    return path


def tighten(root: Path) -> int:
    """Take every group and other permission off ``root`` and everything under it (symbolic
    links below ``root`` are neither followed nor changed); the number of entries that had
    some. A private ``root`` already keeps everyone else out of what is below it, so only an
    open one is walked: a start-up costs one ``stat`` once the directory is private."""
    if is_private(root):
        return 0
    return _tighten_tree(root)


def _tighten_tree(root: Path) -> int:
    narrowed = int(_narrow(root))
    with os.scandir(root) as entries:
        for entry in entries:
            if entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                narrowed += _tighten_tree(Path(entry.path))
            else:
                narrowed += _narrow(Path(entry.path))
    return narrowed


def is_private(path: Path) -> bool:
    """Whether no one but the owner may read, write or enter ``path``."""
    return stat.S_IMODE(os.stat(path).st_mode) & OTHERS_BITS == 0


def _narrow(path: Path) -> bool:
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if mode & OTHERS_BITS == 0:
        return False
    os.chmod(path, mode & ~OTHERS_BITS)
    return True
