"""Where the backfill job keeps a group's offsets: the next offset to read per partition.

``GroupOffsetStore`` (the default) commits them to the consumer group in rillet itself, so
``rillet groups describe G`` shows them and the lag. A group used by a backfill must have no
members: the coordinator accepts commits from outside only for idle groups.
``FileOffsetStore`` keeps them in a JSON file (written atomically) instead, for clusters
where the job may not touch groups; docs/spark.md says when to use which.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from rillet.client import BlockingAdmin, TopicPartition
from rillet.client.errors import GroupIdNotFoundError, UnknownMemberIdError
from rillet.client.security import ClientSecurity
from rillet.spark_io.errors import BackfillError
from rillet.wire.atomic_file import write_atomically


class OffsetStore(Protocol):
    """Committed offsets of one group, per topic: ``{partition: next offset}``."""

    def load(self, topic: str) -> dict[int, int]:
        """The committed offsets of ``topic`` ({} when the group has none)."""
        ...

    def save(self, topic: str, offsets: Mapping[int, int]) -> None:
        """Commit ``offsets`` (all at once, or not at all)."""
        ...

    def describe(self) -> str: ...


class GroupOffsetStore:
    """Offsets committed to a rillet consumer group (OffsetCommit / OffsetFetch)."""

    def __init__(
        self,
        bootstrap: str,
        group: str,
        request_timeout_ms: int = 30_000,
        security: ClientSecurity | None = None,
    ) -> None:
        self.bootstrap = bootstrap
        self.group = group
        self.request_timeout_ms = request_timeout_ms
        self.security = security or ClientSecurity()

    def _admin(self) -> BlockingAdmin:
        return BlockingAdmin(
            self.bootstrap,
            request_timeout_ms=self.request_timeout_ms,
            **self.security.client_options(),
        )

    def load(self, topic: str) -> dict[int, int]:
        """The group's offsets; fails at once if the group has members (its offsets could
        not be recorded at the end of the run)."""
        with self._admin() as admin:
            try:
                members = len(admin.describe_group(self.group).members)
            except GroupIdNotFoundError:
                members = 0
            if members:
                raise BackfillError(
                    f"group {self.group!r} has {members} active member(s), so the backfill "
                    "cannot record offsets for it; give the backfill a group of its own"
                )
            found = admin.group_offsets(self.group)
        return {tp.partition: o for tp, o in found.items() if tp.topic == topic and o >= 0}

    def save(self, topic: str, offsets: Mapping[int, int]) -> None:
        commit = {TopicPartition(topic, p): o for p, o in offsets.items()}
        with self._admin() as admin:
            try:
                admin.set_group_offsets(self.group, commit)
            except UnknownMemberIdError as exc:
                raise BackfillError(
                    f"group {self.group!r} has active members, so its offsets cannot be set "
                    f"from outside; give the backfill a group of its own ({exc})"
                ) from exc

    def describe(self) -> str:
        return f"consumer group {self.group!r}"


class FileOffsetStore:
    """Offsets in a JSON file, ``{"group": G, "topics": {"t": {"0": 42}}}``, replaced
    atomically (temporary file, fsync, rename, fsync of the directory)."""

    def __init__(self, path: Path | str, group: str) -> None:
        self.path = Path(path)
        self.group = group

    def _read(self) -> dict[str, dict[str, int]]:
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise BackfillError(f"offsets file {self.path} is unreadable: {exc}") from exc
        if data.get("group") != self.group:
            raise BackfillError(
                f"offsets file {self.path} belongs to group {data.get('group')!r}, not "
                f"{self.group!r}"
            )
        topics: dict[str, dict[str, int]] = data.get("topics", {})
        return topics

    def load(self, topic: str) -> dict[int, int]:
        return {int(p): int(o) for p, o in self._read().get(topic, {}).items()}

    def save(self, topic: str, offsets: Mapping[int, int]) -> None:
        topics = self._read()
        current = topics.setdefault(topic, {})
        current.update({str(p): int(o) for p, o in sorted(offsets.items())})
        atomic_write_json(self.path, {"group": self.group, "topics": topics})

    def describe(self) -> str:
        return f"offsets file {self.path}"


def atomic_write_json(path: Path, data: object) -> None:
    """Replace ``path`` with ``data`` as JSON: readers see the old or the new file, whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    write_atomically(path, text.encode("ascii"), tmp)
