"""The small files beside the segments: identity, checkpoints and the clean-shutdown marker.

Segments hold the data; these files let a restart be quick and safe:

- ``partition.meta`` — which topic and partition this directory holds, so a directory copied
  or renamed by hand is refused instead of silently served as another partition.
- ``recovery-point-checkpoint`` — offsets below it were fsynced; recovery re-validates only
  from the segment that holds it.
- ``log-start-offset-checkpoint`` — the first offset still served (retention, DeleteRecords).
- ``clean-shutdown`` — written last by ``close()``, removed (durably) by ``open()``: while it
  exists, nothing has been appended since every file was fsynced.

All are plain text, one value per line, so an operator can read them with ``cat``.

Issue 5 adds ``leader-epoch-checkpoint`` and ``producer-state`` here, as further methods of
:class:`PartitionFiles` written with :func:`write_atomically`; their names are reserved in
:mod:`layout`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rillet.partition_store.checkpoint import overwrite_int, read_int, write_int
from rillet.partition_store.errors import PartitionMismatch, StoreError, TopicIdMismatch
from rillet.partition_store.layout import (
    CLEAN_SHUTDOWN_FILE,
    HIGH_WATERMARK_FILE,
    LOG_START_OFFSET_FILE,
    PARTITION_META_FILE,
    RECOVERY_POINT_FILE,
)
from rillet.wire import disk_io
from rillet.wire.atomic_file import SyncBatch, fsync_dir, write_atomically

META_FORMAT_VERSION = 1
_CLEAN_SHUTDOWN_HEADER = "rillet clean-shutdown v1"


@dataclass(frozen=True, slots=True)
class PartitionMeta:
    """Identity of a partition directory; ``created_ms`` is when it was first opened."""

    topic: str
    partition: int
    created_ms: int
    version: int = META_FORMAT_VERSION
    topic_id: str = ""  # the metadata quorum's id of this topic incarnation

    def encode(self) -> bytes:
        lines = [
            f"version={self.version}",
            f"topic={self.topic}",
            f"partition={self.partition}",
            f"created_ms={self.created_ms}",
        ]
        if self.topic_id:
            lines.append(f"topic_id={self.topic_id}")
        return ("\n".join(lines) + "\n").encode("utf-8")

    @classmethod
    def decode(cls, data: bytes) -> PartitionMeta | None:
        """The meta in ``data``, or None if it is not a readable meta file.

        Unknown keys are ignored so a newer format can add fields.
        """
        try:
            fields = dict(
                line.split("=", 1) for line in data.decode("utf-8").splitlines() if "=" in line
            )
            return cls(
                fields["topic"],
                int(fields["partition"]),
                int(fields["created_ms"]),
                int(fields["version"]),
                fields.get("topic_id", ""),
            )
        except (UnicodeDecodeError, KeyError, ValueError):
            return None


def _check_topic_name(topic: str) -> None:
    if not topic or any(c in topic for c in "\r\n\0"):
        raise StoreError(f"invalid topic name {topic!r}")


class PartitionFiles:
    """Reads and writes the small files of one partition directory.

    Every write replaces its file atomically and durably (temp file, fsync, rename, fsync of
    the directory), so a crash leaves the old or the new value, never a torn one.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    # -- identity ---------------------------------------------------------------------------

    def read_meta(self) -> PartitionMeta | None:
        """The directory's identity, or None when it has no readable meta file."""
        try:
            return PartitionMeta.decode((self.directory / PARTITION_META_FILE).read_bytes())
        except FileNotFoundError:
            return None

    def ensure_meta(
        self,
        topic: str,
        partition: int,
        now_ms: int,
        topic_id: str = "",
        batch: SyncBatch | None = None,
    ) -> PartitionMeta:
        """Create ``partition.meta``, or check that it names this topic and partition
        (durable at once, or when ``batch`` commits).

        An unreadable meta file is rewritten: it guards identity only, and the directory
        name still carries the topic and partition.
        """
        _check_topic_name(topic)
        path = self.directory / PARTITION_META_FILE
        existing = self.read_meta()
        if existing is not None:
            if (existing.topic, existing.partition) != (topic, partition):
                raise PartitionMismatch(
                    f"{self.directory} holds {existing.topic}-{existing.partition}, "
                    f"not {topic}-{partition}"
                )
            if topic_id and existing.topic_id and existing.topic_id != topic_id:
                raise TopicIdMismatch(
                    f"{self.directory} holds topic id {existing.topic_id}, not {topic_id}"
                )
            if topic_id and not existing.topic_id:
                existing = PartitionMeta(
                    existing.topic, existing.partition, existing.created_ms, topic_id=topic_id
                )
                write_atomically(path, existing.encode(), batch=batch)
            return existing
        meta = PartitionMeta(topic, partition, now_ms, topic_id=topic_id)
        self.create_meta(meta, batch)
        return meta

    def create_meta(self, meta: PartitionMeta, batch: SyncBatch | None = None) -> None:
        """Write ``partition.meta`` for a directory that has none (durable at once, or when
        ``batch`` commits)."""
        _check_topic_name(meta.topic)
        write_atomically(self.directory / PARTITION_META_FILE, meta.encode(), batch=batch)

    # -- checkpoints ------------------------------------------------------------------------

    @property
    def recovery_point_path(self) -> Path:
        return self.directory / RECOVERY_POINT_FILE

    def read_recovery_point(self) -> int:
        """Offsets below the result are known fsynced; 0 (recover everything) if unknown."""
        value = read_int(self.recovery_point_path)
        return value if value is not None and value >= 0 else 0

    def write_recovery_point(self, offset: int) -> None:
        write_int(self.recovery_point_path, offset)

    def read_log_start_offset(self) -> int | None:
        value = read_int(self.directory / LOG_START_OFFSET_FILE)
        return value if value is not None and value >= 0 else None

    def write_log_start_offset(self, offset: int, batch: SyncBatch | None = None) -> None:
        write_int(self.directory / LOG_START_OFFSET_FILE, offset, batch)

    def read_high_watermark(self) -> int | None:
        value = read_int(self.directory / HIGH_WATERMARK_FILE)
        return value if value is not None and value >= 0 else None

    def write_high_watermark(
        self, offset: int, durable: bool = True, batch: SyncBatch | None = None
    ) -> None:
        """Blocking: call it off the event loop. Not ``durable``: rewritten in place, not
        fsynced (the periodic checkpoint, ``overwrite_int``: one lost in a power failure
        is older or absent, never newer, and either only makes a restarted replica serve
        less until its leader says more). With ``batch``: in place too, durable once it
        commits. Durable alone: replaced atomically and fsynced."""
        path = self.directory / HIGH_WATERMARK_FILE
        if durable and batch is None:
            write_int(path, offset)
        else:
            overwrite_int(path, offset)
            if batch is not None:
                batch.note(self.directory)

    # -- clean shutdown ---------------------------------------------------------------------

    def write_clean_shutdown(
        self, segment_sizes: dict[int, int], batch: SyncBatch | None = None
    ) -> None:
        """Record a clean close and the size of every segment at that moment.

        The sizes let the next open notice a log changed while the node was down (a tail
        truncated or extended by hand, a disk restored from an older image): only segments
        whose size still matches are trusted without re-validation.
        """
        lines = [_CLEAN_SHUTDOWN_HEADER]
        lines += [f"{base} {size}" for base, size in sorted(segment_sizes.items())]
        data = ("\n".join(lines) + "\n").encode()
        write_atomically(self.directory / CLEAN_SHUTDOWN_FILE, data, batch=batch)

    def take_clean_shutdown(self) -> dict[int, int] | None:
        """Segment sizes recorded by the last clean close, removing the marker durably.

        None when the last run did not close cleanly (or the marker is unreadable). The
        removal is fsynced before the log can be written: a crash after this run's first
        append must never find a stale marker and skip recovery.
        """
        path = self.directory / CLEAN_SHUTDOWN_FILE
        try:
            text = path.read_text(encoding="ascii")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError):
            text = ""
        disk_io.unlink(path)
        fsync_dir(self.directory)
        lines = text.splitlines()
        if not lines or lines[0] != _CLEAN_SHUTDOWN_HEADER:
            return None
        sizes: dict[int, int] = {}
        try:
            for line in lines[1:]:
                base, size = line.split()
                sizes[int(base)] = int(size)
        except ValueError:
            return None
        return sizes
