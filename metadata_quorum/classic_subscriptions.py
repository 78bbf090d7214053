"""Kafka's ConsumerProtocol bytes, which classic consumers exchange through JoinGroup and
SyncGroup: the Subscription a member sends (topics, and from v1 the partitions it owns) and
the Assignment it receives. The coordinator reads and writes them itself only when it
assigns for a classic member of a consumer-protocol group (docs/consumer-groups.md).

Pure functions of bytes; a malformed subscription decodes to None.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


@dataclass(frozen=True, slots=True)
class Subscription:
    topics: list[str]
    owned: list[tuple[str, list[int]]]  # v1+: what the member still owns (cooperative)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def int16(self) -> int:
        (v,) = _I16.unpack_from(self.data, self.at)
        self.at += 2
        return int(v)

    def int32(self) -> int:
        (v,) = _I32.unpack_from(self.data, self.at)
        self.at += 4
        return int(v)

    def count(self) -> int:
        n = self.int32()
        if not 0 <= n <= len(self.data):  # an entry takes at least a byte
            raise ValueError("bad array length")
        return n

    def string(self) -> str:
        size = self.int16()
        raw = self.data[self.at : self.at + size]
        if size < 0 or len(raw) != size:
            raise ValueError("bad string")
        self.at += size
        return raw.decode()

    def skip_bytes(self) -> None:
        size = self.int32()
        if size > 0:
            if self.at + size > len(self.data):
                raise ValueError("bad bytes")
            self.at += size


def decode_subscription(metadata: bytes) -> Subscription | None:
    """A Subscription of any version (fields after the owned partitions are not needed;
    owned partitions that do not decode count as none)."""
    r = _Reader(metadata)
    try:
        version = r.int16()
        topics = [r.string() for _ in range(r.count())]
    except (struct.error, UnicodeDecodeError, ValueError):
        return None
    owned: list[tuple[str, list[int]]] = []
    try:
        if version >= 1 and r.at < len(metadata):
            r.skip_bytes()  # user data
            for _ in range(r.count()):
                topic = r.string()
                owned.append((topic, [r.int32() for _ in range(r.count())]))
    except (struct.error, UnicodeDecodeError, ValueError):
        owned = []
    return Subscription(topics, owned)


def encode_assignment(assigned: list[tuple[str, list[int]]]) -> bytes:
    """An Assignment v0: the partitions per topic, no user data."""
    out = [_I16.pack(0), _I32.pack(len(assigned))]
    for topic, partitions in assigned:
        name = topic.encode()
        out += [_I16.pack(len(name)), name, _I32.pack(len(partitions))]
        out += [_I32.pack(p) for p in partitions]
    out.append(_I32.pack(-1))
    return b"".join(out)
