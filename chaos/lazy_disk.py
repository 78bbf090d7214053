"""A file layer that remembers what is not durable yet, and can lose it: power cuts in-process.

The idea of Jepsen's LazyFS, inside the node: installed under the stores through
``rillet.wire.disk_io`` (only by the chaos node entry point, ``cli/faulty_node.py``), it
passes every operation to the kernel and journals, for each file under the node's data
directory, what a power cut would take back:

- file content: the size at its last fsync/fdatasync (what lies beyond is lost) and the old
  bytes of every write or truncation below that size since (restored);
- directory entries: creations, renames and unlinks not yet followed by an fsync of their
  directory (undone: a created name disappears, a rename goes back, an unlinked file comes
  back — it is kept as a hard link in a graveyard next to the data directory until then).

:meth:`LazyDisk.power_cut` applies all of that and ends the process at once, holding the
layer's lock so no other thread writes in between. A ``syncfs`` makes everything durable.
Files that exist when the layer starts count as durable (as if the kernel wrote them back
before this run; the model only loses what this process wrote). Directories themselves
(mkdir, rmtree of a deleted partition) are not journalled.

The same layer injects disk faults (:class:`DiskFaults`): EIO on reads (``pread``, and
``sendfile`` of served log bytes) or writes of files whose path contains a given text,
ENOSPC on writes, and fsyncs that take a while.
"""

from __future__ import annotations

import errno
import itertools
import os
import shutil
import stat
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rillet.wire.disk_io import StrPath

POWER_CUT_EXIT_STATUS = 99  # what a node whose power was cut exits with


@dataclass(slots=True)
class DiskFaults:
    """Faults in force; an empty text matches no path."""

    eio_read: str = ""  # reads of matching files fail with EIO
    eio_write: str = ""  # writes, truncations and fsyncs of matching files fail with EIO
    enospc: str = ""  # writes that grow matching files fail with ENOSPC
    slow_fsync_ms: int = 0  # every fsync takes this long first

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DiskFaults:
        return cls(
            str(d.get("eio_read", "")),
            str(d.get("eio_write", "")),
            str(d.get("enospc", "")),
            int(d.get("slow_fsync_ms", 0)),
        )


@dataclass(slots=True)
class _File:
    path: str  # its current name (a graveyard name once unlinked)
    durable_size: int
    undo: list[tuple[int, bytes]] = field(default_factory=list)  # (offset, old bytes)


@dataclass(slots=True)
class _Fd:
    path: str
    key: tuple[int, int] | None  # the tracked file's (device, inode); None: a directory
    append: bool


@dataclass(slots=True)
class _DirOp:
    kind: str  # "create" | "replace" | "unlink"
    directories: tuple[str, ...]  # an fsync of any of these makes it durable
    path: str
    src: str = ""
    backup: str = ""  # the hard link keeping a replaced or unlinked file


class LazyDisk:
    def __init__(self, root: Path, graveyard: Path) -> None:
        self.root = os.path.realpath(root)
        self.graveyard = os.path.realpath(graveyard)
        shutil.rmtree(self.graveyard, ignore_errors=True)
        os.makedirs(self.graveyard, exist_ok=True)
        self.faults = DiskFaults()
        self._lock = threading.Lock()  # not reentrant: see power_cut
        self._fds: dict[int, _Fd] = {}
        self._files: dict[tuple[int, int], _File] = {}
        self._ops: list[_DirOp] = []
        self._names = itertools.count()

    # -- helpers --------------------------------------------------------------------------

    def _abs(self, path: StrPath, dir_fd: int | None = None) -> str:
        if dir_fd is not None and not os.path.isabs(path):
            base = (
                self._fds[dir_fd].path
                if dir_fd in self._fds
                else os.readlink(f"/proc/self/fd/{dir_fd}")
            )
            return os.path.join(base, os.fspath(path))
        return os.path.abspath(os.fspath(path))

    def _ours(self, path: str) -> bool:
        return path == self.root or path.startswith(self.root + os.sep)

    def _track(self, key: tuple[int, int], path: str, size: int) -> _File:
        f = self._files.get(key)
        if f is None:
            f = self._files[key] = _File(path, size)
        return f

    def _save_undo(self, fd: int, f: _File, offset: int, end: int) -> None:
        """Keep the durable bytes in [offset, end) before they are overwritten or cut."""
        end = min(end, f.durable_size)
        if offset < end:  # through /proc: the writer's descriptor may be write-only
            reader = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY)
            try:
                f.undo.append((offset, os.pread(reader, end - offset, offset)))
            finally:
                os.close(reader)

    def _check(self, kind: str, path: str) -> None:
        text = getattr(self.faults, kind)
        if text and text in path:
            code = errno.ENOSPC if kind == "enospc" else errno.EIO
            raise OSError(code, f"{os.strerror(code)} (injected)", path)

    # -- the FileLayer operations ---------------------------------------------------------

    def open_fd(
        self, path: StrPath, flags: int, mode: int = 0o777, *, dir_fd: int | None = None
    ) -> int:
        with self._lock:
            full = self._abs(path, dir_fd)
            if not self._ours(full):
                return os.open(path, flags, mode, dir_fd=dir_fd)
            existed = os.path.exists(full)
            if existed and flags & os.O_TRUNC:
                fd = os.open(full, os.O_RDONLY)
                try:
                    st = os.fstat(fd)
                    f = self._track((st.st_dev, st.st_ino), full, st.st_size)
                    self._save_undo(fd, f, 0, st.st_size)
                finally:
                    os.close(fd)
            fd = os.open(path, flags, mode, dir_fd=dir_fd)
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                self._fds[fd] = _Fd(full, None, False)
                return fd
            key = (st.st_dev, st.st_ino)
            if existed:
                self._track(key, full, st.st_size)
            else:  # a new file (its inode number may have served a deleted one)
                self._files[key] = _File(full, 0)
                self._ops.append(_DirOp("create", (os.path.dirname(full),), full))
            self._fds[fd] = _Fd(full, key, bool(flags & os.O_APPEND))
            return fd

    # close and dup change no file and are called on the event loop (regions of fetch
    # answers): they do not wait for the lock, which a thread may hold through an fsync.
    # Forgetting a descriptor before closing it keeps its number free of a stale entry.

    def close(self, fd: int) -> None:
        self._fds.pop(fd, None)
        os.close(fd)

    def dup(self, fd: int) -> int:
        new = os.dup(fd)
        entry = self._fds.get(fd)
        if entry is not None:
            self._fds[new] = entry
        return new

    def _write_at(self, fd: int, data: Any, offset: int | None) -> int:
        with self._lock:
            entry = self._fds.get(fd)
            if entry is None or entry.key is None:
                return os.write(fd, data) if offset is None else os.pwrite(fd, data, offset)
            self._check("eio_write", entry.path)
            f = self._files[entry.key]
            size = os.fstat(fd).st_size
            at = offset
            if at is None:
                at = size if entry.append else os.lseek(fd, 0, os.SEEK_CUR)
            n = len(memoryview(data))
            if at + n > size:
                self._check("enospc", entry.path)
            self._save_undo(fd, f, at, at + n)
            return os.write(fd, data) if offset is None else os.pwrite(fd, data, offset)

    def write(self, fd: int, data: Any) -> int:
        return self._write_at(fd, data, None)

    def pwrite(self, fd: int, data: Any, offset: int) -> int:
        return self._write_at(fd, data, offset)

    def pread(self, fd: int, n: int, offset: int) -> bytes:
        self._check_read(fd)
        return os.pread(fd, n, offset)

    def sendfile(self, out_fd: int, in_fd: int, offset: int, count: int) -> int:
        """Log bytes sent to a socket straight from the page cache (fetch answers)."""
        self._check_read(in_fd)
        return os.sendfile(out_fd, in_fd, offset, count)

    def _check_read(self, fd: int) -> None:
        """EIO when reads of ``fd``'s file are failing. Only a descriptor this layer opened
        or duplicated counts: one closed behind its back (``os.close``) may have been reused
        for another file, which the inode tells."""
        if not self.faults.eio_read:
            return
        entry = self._fds.get(fd)
        if entry is None or entry.key is None:
            return
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) == entry.key:
            self._check("eio_read", entry.path)

    def ftruncate(self, fd: int, length: int) -> None:
        with self._lock:
            entry = self._fds.get(fd)
            if entry is not None and entry.key is not None:
                self._check("eio_write", entry.path)
                self._save_undo(fd, self._files[entry.key], length, os.fstat(fd).st_size)
            os.ftruncate(fd, length)

    def truncate(self, path: StrPath, length: int) -> None:
        fd = self.open_fd(path, os.O_WRONLY)
        try:
            self.ftruncate(fd, length)
        finally:
            self.close(fd)

    def fsync(self, fd: int) -> None:
        if self.faults.slow_fsync_ms:
            time.sleep(self.faults.slow_fsync_ms / 1000)
        with self._lock:
            entry = self._fds.get(fd)
            if entry is not None:
                self._check("eio_write", entry.path)
            os.fsync(fd)
            if entry is None:
                return
            if entry.key is None:  # a directory: its entries are durable now
                self._ops = [op for op in self._ops if not self._settled(op, entry.path)]
            else:
                f = self._files[entry.key]
                f.durable_size, f.undo = os.fstat(fd).st_size, []

    fdatasync = fsync

    def _settled(self, op: _DirOp, directory: str) -> bool:
        if directory not in op.directories:
            return False
        if op.backup:
            try:
                os.unlink(op.backup)
            except FileNotFoundError:
                pass
        return True

    def syncfs(self, fd: int) -> None:
        with self._lock:
            os.fsync(fd)
            for f in self._files.values():
                try:
                    f.durable_size = os.stat(f.path).st_size
                except FileNotFoundError:
                    f.durable_size = 0
                f.undo = []
            for op in self._ops:
                self._settled(op, op.directories[0])
            self._ops = []

    def _backup(self, path: str) -> str:
        backup = os.path.join(self.graveyard, str(next(self._names)))
        os.link(path, backup)
        st = os.stat(backup)
        f = self._files.get((st.st_dev, st.st_ino))
        if f is not None:
            f.path = backup
        return backup

    def replace(self, src: StrPath, dst: StrPath) -> None:
        with self._lock:
            s, d = self._abs(src), self._abs(dst)
            if not (self._ours(s) and self._ours(d)):
                os.replace(src, dst)
                return
            backup = self._backup(d) if os.path.exists(d) else ""
            st = os.stat(s)
            os.replace(s, d)
            moved = self._files.get((st.st_dev, st.st_ino))
            if moved is not None:
                moved.path = d
            dirs = tuple(sorted({os.path.dirname(s), os.path.dirname(d)}))
            self._ops.append(_DirOp("replace", dirs, d, src=s, backup=backup))

    def unlink(self, path: StrPath) -> None:
        with self._lock:
            p = self._abs(path)
            if not self._ours(p) or not os.path.exists(p):
                os.unlink(path)
                return
            backup = self._backup(p)
            os.unlink(p)
            self._ops.append(_DirOp("unlink", (os.path.dirname(p),), p, backup=backup))

    # -- faults ---------------------------------------------------------------------------

    def power_cut(self) -> None:
        """Lose everything not durable, then end the process (never returns).

        Call it from any thread but one inside this layer (a signal handler on the main
        thread could land in the middle of an operation: start a thread for it instead). It
        waits for the operation in progress, and holds the lock for good: no thread writes
        after this.
        """
        self.lose_unsynced()
        os._exit(POWER_CUT_EXIT_STATUS)

    def lose_unsynced(self) -> None:
        """Put the files as a power cut now would leave them; the layer takes no more
        operations after this (its lock stays held)."""
        self._lock.acquire()
        for f in self._files.values():
            try:
                fd = os.open(f.path, os.O_WRONLY)
            except OSError:
                continue
            try:
                for offset, old in reversed(f.undo):
                    os.pwrite(fd, old, offset)
                if os.fstat(fd).st_size > f.durable_size:
                    os.ftruncate(fd, f.durable_size)
            finally:
                os.close(fd)
        for op in reversed(self._ops):
            try:
                if op.kind == "create":
                    os.unlink(op.path)
                elif op.kind == "replace":
                    os.rename(op.path, op.src)
                    if op.backup:
                        os.rename(op.backup, op.path)
                else:
                    os.rename(op.backup, op.path)
            except OSError:
                pass  # the name was changed again by an op undone earlier
