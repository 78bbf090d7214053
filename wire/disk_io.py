"""The file operations of the stores (partition logs, Raft log, small atomic files), in one place.

Every open, write, truncation, fsync, rename and unlink of a data file goes through these
names, and so does every read of log bytes served to clients and followers (``pread``, or
``sendfile`` from a descriptor taken with ``dup`` and released with ``close``), so a test
harness can slide a fault-injecting layer under the stores: a "power cut" that drops what
was never fsynced, EIO, a slow or a full disk (``rillet.chaos.lazy_disk``, docs/chaos.md).
In production the names *are* the ``os`` functions, bound once at import, so a call costs
the same attribute lookup as ``os.pwrite`` and nothing else.

:func:`install` rebinds them for the whole process. Only the chaos harness's node entry
point calls it, once, before the node starts (a test mode, never an environment switch);
the bindings are then fixed for the life of the process.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

StrPath = str | Path


def _unlink(path: StrPath) -> None:
    os.unlink(path)


def _syncfs(fd: int) -> None:
    """Flush every dirty page of ``fd``'s file system (``os.sync`` where syncfs is missing)."""
    syncfs = getattr(_LIBC, "syncfs", None) if _LIBC is not None else None
    if syncfs is None:
        os.sync()
        return
    if syncfs(fd) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"syncfs failed: {os.strerror(err)}")


def _load_libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


_LIBC = _load_libc()

open_fd: Callable[..., int] = os.open
close: Callable[[int], None] = os.close
dup: Callable[[int], int] = os.dup
write: Callable[[int, Any], int] = os.write
pwrite: Callable[[int, Any, int], int] = os.pwrite
pread: Callable[[int, int, int], bytes] = os.pread
sendfile: Callable[[int, int, int, int], int] = os.sendfile  # (socket, file, offset, count)
ftruncate: Callable[[int, int], None] = os.ftruncate
truncate: Callable[[StrPath, int], None] = os.truncate
fsync: Callable[[int], None] = os.fsync
fdatasync: Callable[[int], None] = getattr(os, "fdatasync", os.fsync)
syncfs: Callable[[int], None] = _syncfs
replace: Callable[[StrPath, StrPath], None] = os.replace
unlink: Callable[[StrPath], None] = _unlink


def unlink_missing_ok(path: StrPath) -> None:
    """``Path.unlink(missing_ok=True)`` through the layer."""
    try:
        unlink(path)
    except FileNotFoundError:
        pass


def read_file(path: StrPath) -> bytes:
    """A whole small file (``Path.read_bytes`` through the layer)."""
    fd = open_fd(path, os.O_RDONLY)
    try:
        parts = []
        position = 0
        while chunk := pread(fd, 1 << 20, position):
            parts.append(chunk)
            position += len(chunk)
        return b"".join(parts)
    finally:
        close(fd)


class FileLayer(Protocol):
    """What a layer under the stores implements: the same signatures as the ``os`` calls."""

    def open_fd(
        self, path: StrPath, flags: int, mode: int = 0o777, *, dir_fd: int | None = None
    ) -> int: ...
    def close(self, fd: int) -> None: ...
    def dup(self, fd: int) -> int: ...
    def write(self, fd: int, data: Any) -> int: ...
    def pwrite(self, fd: int, data: Any, offset: int) -> int: ...
    def pread(self, fd: int, n: int, offset: int) -> bytes: ...
    def sendfile(self, out_fd: int, in_fd: int, offset: int, count: int) -> int: ...
    def ftruncate(self, fd: int, length: int) -> None: ...
    def truncate(self, path: StrPath, length: int) -> None: ...
    def fsync(self, fd: int) -> None: ...
    def fdatasync(self, fd: int) -> None: ...
    def syncfs(self, fd: int) -> None: ...
    def replace(self, src: StrPath, dst: StrPath) -> None: ...
    def unlink(self, path: StrPath) -> None: ...


_NAMES = (
    "open_fd",
    "close",
    "dup",
    "write",
    "pwrite",
    "pread",
    "sendfile",
    "ftruncate",
    "truncate",
    "fsync",
    "fdatasync",
    "syncfs",
    "replace",
    "unlink",
)


def install(layer: FileLayer) -> None:
    """Route every operation of this module through ``layer`` (test entry points only)."""
    module = globals()
    for name in _NAMES:
        module[name] = getattr(layer, name)


def layered() -> bool:
    """Whether the operations go through an installed layer rather than straight to the OS.

    Work that another process does on this node's files (the log cleaner's child) would go
    around such a layer, and the faults it injects would not reach those files; such work
    asks here and stays in this process while a layer is installed."""
    return pwrite is not os.pwrite
