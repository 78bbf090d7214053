"""The single-node topic table, persisted in the data directory.

This is the node-local stand-in for the metadata quorum's topic registry (DESIGN §5): the
broker asks it which topics and partitions exist. Writes are atomic (temp file, fsync,
rename, fsync of the directory) so a crash leaves either the old or the new table.
"""

from __future__ import annotations

import os
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import cbor2

from rillet.broker.errors import BrokerError, TopicError
from rillet.wire.error_codes import ErrorCode

TABLE_FILE = "topics.cbor"
FORMAT_VERSION = 1
MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_NAME = re.compile(r"^[A-Za-z0-9._-]+$")


@dataclass(frozen=True, slots=True)
class TopicInfo:
    name: str
    topic_id: str
    num_partitions: int
    configs: dict[str, str] = field(default_factory=dict)


def validate_topic_name(name: str) -> None:
    """Kafka's rules: 1-249 chars of [A-Za-z0-9._-], not "." or ".."."""
    if not name or name in (".", ".."):
        raise TopicError(ErrorCode.INVALID_TOPIC, f"illegal topic name {name!r}")
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        raise TopicError(
            ErrorCode.INVALID_TOPIC, f"topic name longer than {MAX_TOPIC_NAME_LENGTH} chars"
        )
    if not _LEGAL_NAME.match(name):
        raise TopicError(
            ErrorCode.INVALID_TOPIC,
            f"topic name {name!r} may contain only ASCII letters, digits, '.', '_' and '-'",
        )


class TopicRegistry:
    """Topics by name; mutations are persisted before they return."""

    def __init__(self, meta_dir: Path) -> None:
        self._dir = meta_dir
        self._topics: dict[str, TopicInfo] = {}
        meta_dir.mkdir(parents=True, exist_ok=True)
        self._load()

    def __contains__(self, name: str) -> bool:
        return name in self._topics

    def get(self, name: str) -> TopicInfo | None:
        return self._topics.get(name)

    def all(self) -> list[TopicInfo]:
        return sorted(self._topics.values(), key=lambda t: t.name)

    def add(self, name: str, num_partitions: int, configs: dict[str, str]) -> TopicInfo:
        if name in self._topics:
            raise TopicError(ErrorCode.TOPIC_ALREADY_EXISTS, f"topic {name!r} already exists")
        info = TopicInfo(name, uuid.uuid4().hex, num_partitions, dict(configs))
        self._topics[name] = info
        self._save()
        return info

    def remove(self, name: str) -> TopicInfo:
        info = self._topics.pop(name, None)
        if info is None:
            raise TopicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"unknown topic {name!r}")
        self._save()
        return info

    def _load(self) -> None:
        path = self._dir / TABLE_FILE
        if not path.exists():
            return
        try:
            raw = cbor2.loads(path.read_bytes())
            if raw.get("version") != FORMAT_VERSION:
                raise ValueError(f"unsupported version {raw.get('version')!r}")
            for name, t in raw["topics"].items():
                self._topics[name] = TopicInfo(
                    name, str(t["topic_id"]), int(t["num_partitions"]), dict(t["configs"])
                )
        except Exception as exc:
            raise BrokerError(f"topic table {path} is unreadable: {exc}") from exc

    def _save(self) -> None:
        data = cbor2.dumps(
            {
                "version": FORMAT_VERSION,
                "topics": {
                    t.name: {
                        "topic_id": t.topic_id,
                        "num_partitions": t.num_partitions,
                        "configs": t.configs,
                    }
                    for t in self._topics.values()
                },
            }
        )
        path = self._dir / TABLE_FILE
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        dir_fd = os.open(self._dir, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
