"""The durable Raft log of our own engine: segmented, CRC-checked, fsynced by the driver.

It implements ``LogStorage`` (what the core reads) plus the writes a driver performs on a
Ready: ``append`` (replacing a conflicting suffix), ``set_hard_state``, ``apply_snapshot``
and ``sync``. Nothing is acknowledged before ``sync`` returns: the driver appends every entry
of a Ready, syncs once (group commit: one fdatasync for many proposals), and only then sends
the messages that depend on them.

On disk, in the member's directory:

- ``log-<first index, 20 digits>.seg``: frames ``[length u32][crc32c u32][CBOR entry]``, the
  CRC over the CBOR bytes; a new segment starts after ``segment_bytes``;
- ``hard-state`` and ``snapshot``: replaced atomically (temp file, fsync, rename, fsync of
  the directory), each ``[crc32c u32][CBOR]``; the hard state is fsynced before it returns,
  because a vote must never be forgotten once sent;
- ``directory-id``: this directory's identity (``directory_identity.py``).

Opening validates every frame. A torn or corrupt frame at the end of the last segment (a
crash mid-write) is cut off with everything after it; the same damage anywhere else, or a
damaged hard state or snapshot, is a typed error: the member refuses to start rather than
lose or invent acknowledged entries. A full disk surfaces as :class:`StorageFull` after the
partial frame has been cut back, so what was synced stays intact.

Entries after the snapshot are also kept in memory: the metadata log is bounded by
snapshots, and the core reads it on every step.
"""

from __future__ import annotations

import errno
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cbor2
import crc32c

from rillet.raft.core_errors import CoreContractError
from rillet.raft.directory_identity import load_directory_id
from rillet.raft.errors import RaftError
from rillet.raft.log_storage import MemoryStorage
from rillet.raft.messages import EntryKind, HardState, LogEntry
from rillet.raft.quorum import Snapshot
from rillet.wire import disk_io
from rillet.wire.atomic_file import fsync_dir, write_atomically

FRAME_HEADER = struct.Struct(">II")  # payload length, crc32c of the payload
MAX_FRAME_BYTES = 64 * 1024 * 1024
DEFAULT_SEGMENT_BYTES = 16 * 1024 * 1024
SEGMENT_PREFIX, SEGMENT_SUFFIX = "log-", ".seg"
HARD_STATE_FILE, SNAPSHOT_FILE = "hard-state", "snapshot"


class StorageError(RaftError):
    """The durable log cannot be trusted or written; the member must stop."""


class CorruptStorage(StorageError):
    """Damage that recovery may not silently cut (not a torn tail)."""


class StorageFull(StorageError):
    """The disk is full: nothing unsynced was acknowledged, the member stops cleanly."""


@dataclass(slots=True)
class _Segment:
    first_index: int
    path: Path
    size: int
    positions: list[int]  # byte position of each entry of this segment, in index order


def encode_frame(entry: LogEntry) -> bytes:
    payload = cbor2.dumps([entry.index, entry.term, int(entry.kind), entry.data])
    return FRAME_HEADER.pack(len(payload), crc32c.crc32c(payload)) + payload


def decode_frames(data: bytes) -> tuple[list[tuple[int, LogEntry]], int]:
    """``(position, entry)`` of every intact frame from the start, and where they end (the
    first torn or damaged byte). Never raises on bad input: damage ends the scan."""
    out: list[tuple[int, LogEntry]] = []
    position = 0
    while position + FRAME_HEADER.size <= len(data):
        length, crc = FRAME_HEADER.unpack_from(data, position)
        start = position + FRAME_HEADER.size
        if length > MAX_FRAME_BYTES or start + length > len(data):
            break
        payload = data[start : start + length]
        if crc32c.crc32c(payload) != crc:
            break
        entry = _decode_entry(payload)
        if entry is None:
            break
        out.append((position, entry))
        position = start + length
    return out, position


def _decode_entry(payload: bytes) -> LogEntry | None:
    try:
        index, term, kind, data = cbor2.loads(payload)
        if not (isinstance(index, int) and isinstance(term, int) and isinstance(data, bytes)):
            return None
        return LogEntry(index, term, bytes(data), EntryKind(kind))
    except Exception:  # cbor2 raises assorted types on garbage; a CRC match makes it rare
        return None


class DurableLog:
    """``LogStorage`` on files, with the driver's write side. One owner (the driver task)."""

    def __init__(self, directory: Path, segment_bytes: int = DEFAULT_SEGMENT_BYTES) -> None:
        """Use :meth:`open`."""
        self.directory = directory
        self._segment_bytes = segment_bytes
        self._view = MemoryStorage()  # what is on disk, as the core reads it
        self._segments: list[_Segment] = []
        self._fd: int | None = None  # the last segment, open for appends
        self._unsynced = False
        self.syncs = 0  # fdatasync calls (the group-commit figure tests and benches read)
        self.truncated_tail_bytes = 0  # what recovery cut off (torn or damaged tail)
        self.directory_id = ""  # set by open(): read, or drawn for a new directory

    @classmethod
    def open(cls, directory: Path, segment_bytes: int = DEFAULT_SEGMENT_BYTES) -> DurableLog:
        directory.mkdir(parents=True, exist_ok=True)
        log = cls(directory, segment_bytes)
        log._load()
        log.directory_id = load_directory_id(directory)
        return log

    # -- LogStorage: answered from the in-memory copy of what is on disk ------------------

    def hard_state(self) -> HardState:
        return self._view.hard_state()

    def snapshot(self) -> Snapshot:
        return self._view.snapshot()

    def first_index(self) -> int:
        return self._view.first_index()

    def last_index(self) -> int:
        return self._view.last_index()

    def term(self, index: int) -> int:
        return self._view.term(index)

    def entries(self, lo: int, hi: int, max_bytes: int | None = None) -> list[LogEntry]:
        return self._view.entries(lo, hi, max_bytes)

    # -- writes -----------------------------------------------------------------------------

    def append(self, entries: list[LogEntry] | tuple[LogEntry, ...]) -> None:
        """Write ``entries`` after discarding any held entry at or after the first new index
        (unsynced until :meth:`sync`)."""
        if not entries:
            return
        first = entries[0].index
        if first > self.last_index() + 1:
            raise CoreContractError(f"append at {first} leaves a gap after {self.last_index()}")
        entries = [e for e in entries if e.index > self.snapshot().index]
        if not entries:
            return
        if entries[0].index <= self.last_index():
            self._truncate_from(entries[0].index)
        for entry in entries:
            self._write(entry)
        self._view.append(entries)

    def sync(self) -> None:
        """Make every appended entry durable (one fdatasync, however many entries)."""
        if self._unsynced and self._fd is not None:
            self._io(disk_io.fdatasync, self._fd)
            self.syncs += 1
        self._unsynced = False

    def set_hard_state(self, hard_state: HardState) -> None:
        """Persist term and vote atomically and durably before returning.

        The commit index rides along when term or vote change but is not written on its own:
        it changes with nearly every Ready, Raft treats it as volatile (a restarted member
        learns it again from the leader), and a rename plus two fsyncs per commit would
        dominate the commit latency.
        """
        current = self.hard_state()
        if (hard_state.term, hard_state.vote, hard_state.vote_directory) != (
            current.term,
            current.vote,
            current.vote_directory,
        ):
            doc = [hard_state.term, hard_state.vote, hard_state.commit, hard_state.vote_directory]
            self._write_checked(HARD_STATE_FILE, cbor2.dumps(doc))
        self._view.set_hard_state(hard_state)

    def apply_snapshot(self, snapshot: Snapshot) -> None:
        """Install ``snapshot`` durably; entries it covers are dropped (the log keeps the
        entries after it only when it agrees with the snapshot at its index)."""
        current = self.snapshot().index
        if snapshot.index < current:
            raise CoreContractError(f"snapshot {snapshot.index} is older than the stored {current}")
        matches = (
            current <= snapshot.index <= self.last_index()
            and self.term(snapshot.index) == snapshot.term
        )
        self._write_checked(
            SNAPSHOT_FILE,
            cbor2.dumps([snapshot.index, snapshot.term, snapshot.data, snapshot.voters]),
        )
        if not matches:  # a leader's snapshot over a short or diverged log: nothing is kept
            self.close()
            for segment in self._segments:
                disk_io.unlink_missing_ok(segment.path)
            self._segments = []
            fsync_dir(self.directory)
        self._view.apply_snapshot(snapshot)
        self._drop_covered_segments()

    def close(self) -> None:
        if self._fd is not None:
            disk_io.close(self._fd)
            self._fd = None

    # -- files --------------------------------------------------------------------------------

    def _load(self) -> None:
        try:
            state = self._read_checked(HARD_STATE_FILE)
            if state is not None:
                # Written before directory ids existed: three fields.
                term, vote, commit, vote_directory = (*state, "") if len(state) == 3 else state
                self._view.set_hard_state(
                    HardState(
                        int(term),
                        None if vote is None else int(vote),
                        int(commit),
                        str(vote_directory),
                    )
                )
            snap = self._read_checked(SNAPSHOT_FILE)
            if snap is not None:
                index, term, data, voters = (*snap, b"") if len(snap) == 3 else snap
                self._view.apply_snapshot(
                    Snapshot(int(index), int(term), bytes(data), bytes(voters))
                )
        except (TypeError, ValueError) as exc:
            raise CorruptStorage(f"hard state or snapshot has the wrong shape: {exc}") from None
        paths = sorted(self.directory.glob(f"{SEGMENT_PREFIX}*{SEGMENT_SUFFIX}"))
        snapshot_index = self.snapshot().index
        kept: list[LogEntry] = []
        expected = None
        for n, path in enumerate(paths):
            data = disk_io.read_file(path)
            frames, end = decode_frames(data)
            last = n == len(paths) - 1
            if end != len(data):
                if not last:
                    raise CorruptStorage(f"{path.name}: damaged at byte {end} (not the tail)")
                self.truncated_tail_bytes = len(data) - end
                fd = disk_io.open_fd(path, os.O_WRONLY)  # a torn write: cut it off durably
                try:
                    disk_io.ftruncate(fd, end)
                    disk_io.fsync(fd)
                finally:
                    disk_io.close(fd)
            first = _segment_first_index(path)
            segment = _Segment(first, path, end, [])
            for position, entry in frames:
                if expected is not None and entry.index != expected:
                    raise CorruptStorage(f"{path.name}: index {entry.index}, expected {expected}")
                expected = entry.index + 1
                segment.positions.append(position)
                if entry.index > snapshot_index:
                    if not kept and entry.index != snapshot_index + 1:
                        raise CorruptStorage(f"{path.name}: a gap after the snapshot")
                    kept.append(entry)
            self._segments.append(segment)
        self._view.append(kept)
        if self._segments:
            self._fd = self._io(disk_io.open_fd, self._segments[-1].path, os.O_WRONLY | os.O_APPEND)
        self._drop_covered_segments()

    def _write(self, entry: LogEntry) -> None:
        frame = encode_frame(entry)
        if len(frame) > MAX_FRAME_BYTES:
            raise StorageError(
                f"entry {entry.index} is {len(frame)} bytes (limit {MAX_FRAME_BYTES})"
            )
        segment = self._segments[-1] if self._segments else None
        if segment is not None and segment.first_index + len(segment.positions) != entry.index:
            if segment.positions:
                raise CoreContractError(f"entry {entry.index} does not continue the log")
            self._segments.pop()  # an empty segment named for another index
            self.close()
            disk_io.unlink_missing_ok(segment.path)
            segment = None
        if segment is None or (
            segment.size > 0 and segment.size + len(frame) > self._segment_bytes
        ):
            self.sync()  # everything in the old segment is durable before a new one starts
            segment = self._new_segment(entry.index)
        assert self._fd is not None
        try:
            written = disk_io.write(self._fd, frame)
            if written != len(frame):
                raise OSError(errno.ENOSPC, "short write")
        except OSError as exc:
            try:
                disk_io.ftruncate(self._fd, segment.size)  # never leave a partial frame behind
            except OSError:
                pass  # a failing disk: the member stops, and the next open cuts a torn frame
            raise _storage_error(exc) from exc
        segment.positions.append(segment.size)
        segment.size += len(frame)
        self._unsynced = True

    def _new_segment(self, first_index: int) -> _Segment:
        self.close()
        path = self.directory / f"{SEGMENT_PREFIX}{first_index:020d}{SEGMENT_SUFFIX}"
        self._fd = self._io(
            disk_io.open_fd, path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644
        )
        fsync_dir(self.directory)
        segment = _Segment(first_index, path, 0, [])
        self._segments.append(segment)
        return segment

    def _truncate_from(self, index: int) -> None:
        """Remove entries at or after ``index`` from the files (and from memory)."""
        while self._segments and self._segments[-1].first_index >= index:
            gone = self._segments.pop()
            self.close()
            disk_io.unlink_missing_ok(gone.path)
        if self._segments:
            segment = self._segments[-1]
            keep = index - segment.first_index
            if keep < len(segment.positions):
                segment.size = segment.positions[keep]
                del segment.positions[keep:]
            if self._fd is None:
                self._fd = self._io(disk_io.open_fd, segment.path, os.O_WRONLY | os.O_APPEND)
            self._io(disk_io.ftruncate, self._fd, segment.size)
            self._io(disk_io.fsync, self._fd)
        fsync_dir(self.directory)

    def _drop_covered_segments(self) -> None:
        """Delete segments whose every entry is covered by the snapshot (not the last one)."""
        covered = self.snapshot().index
        while len(self._segments) > 1 and self._segments[1].first_index <= covered + 1:
            disk_io.unlink_missing_ok(self._segments.pop(0).path)

    def _write_checked(self, name: str, payload: bytes) -> None:
        data = struct.pack(">I", crc32c.crc32c(payload)) + payload
        try:
            write_atomically(self.directory / name, data)
        except OSError as exc:
            raise _storage_error(exc) from exc

    def _read_checked(self, name: str) -> list[Any] | None:
        try:
            data = disk_io.read_file(self.directory / name)
        except FileNotFoundError:
            return None
        if len(data) < 4 or struct.unpack_from(">I", data)[0] != crc32c.crc32c(data[4:]):
            raise CorruptStorage(f"{name}: checksum mismatch")
        try:
            doc = cbor2.loads(data[4:])
        except Exception as exc:
            raise CorruptStorage(f"{name}: unreadable: {exc}") from None
        if not isinstance(doc, list):
            raise CorruptStorage(f"{name}: unexpected content")
        return doc

    @staticmethod
    def _io(fn: object, *args: object) -> int:
        try:
            result: int = fn(*args)  # type: ignore[operator]
        except OSError as exc:
            raise _storage_error(exc) from exc
        return result


def _storage_error(exc: OSError) -> StorageError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return StorageFull(f"disk full: {exc}")
    return StorageError(f"raft storage I/O failed: {exc}")


def _segment_first_index(path: Path) -> int:
    digits = path.name[len(SEGMENT_PREFIX) : -len(SEGMENT_SUFFIX)]
    if len(digits) != 20 or not digits.isdigit():
        raise CorruptStorage(f"{path.name}: not a segment name")
    return int(digits)
