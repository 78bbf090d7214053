"""Kafka client events as history records: the sans-I/O half of ``--client kafka``.

The Kafka clients (confluent-kafka) report what happened through callbacks and return
values — a delivery report with an error or a partition and offset, a consumed message, a
commit that raised or returned — and a classic group's assignments are its leader's
consumer-protocol bytes. These functions turn each into exactly the rows the native
workload writes, so the history format, the checker and ``rillet chaos check`` stay the
same for both clients. They take plain values
(never client objects), so unit tests drive them without a broker.

Outcomes stay conservative, as for the native producer: a record the client refused to
queue is ``fail``; a delivery report with any error is ``unknown`` (an idempotent
producer's batch may have been appended before the error that ended it).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from typing import Any

from rillet.chaos.errors import ChaosError

ERROR_TEXT_LIMIT = 300


def refused(op: Mapping[str, Any], error: str) -> dict[str, Any]:
    """``produce()`` raised: the record was never queued, so it is certainly not written."""
    return {"type": "fail", **op, "error": error[:ERROR_TEXT_LIMIT]}


def delivered(
    op: Mapping[str, Any], error: str | None, partition: int | None, offset: int | None
) -> dict[str, Any]:
    """A delivery report: ``ok`` with the acknowledged partition and offset, else ``unknown``.

    A report without an error but without a usable offset (librdkafka gives -1 when the
    broker's answer had none) cannot be checked at an offset, so it is ``unknown`` too; so is
    an acknowledgement for another partition than the one the record was sent to.
    """
    if error is not None:
        return {"type": "unknown", **op, "error": error[:ERROR_TEXT_LIMIT]}
    if offset is None or offset < 0:
        return {"type": "unknown", **op, "error": f"acknowledged without an offset ({offset})"}
    if partition is not None and partition != op.get("partition"):
        return {
            "type": "unknown",
            **op,
            "error": f"acknowledged at partition {partition}, sent to {op.get('partition')}",
        }
    return {"type": "ok", **op, "offset": offset}


def received_row(name: str, partition: int, offset: int, value: bytes | None) -> dict[str, Any]:
    """One consumed record, in the member file format ``MemberProcesses.received`` reads."""
    text = value.decode(errors="replace") if value is not None else ""
    return {"m": name, "p": partition, "o": offset, "v": text}


def offsets_to_commit(consumed: Iterable[tuple[int, int]]) -> dict[int, int]:
    """partition -> next offset to consume, from the (partition, offset) pairs of a batch."""
    out: dict[int, int] = {}
    for partition, offset in consumed:
        out[partition] = max(out.get(partition, 0), offset + 1)
    return out


def commit_row(name: str, offsets: Mapping[int, int], error: str | None) -> dict[str, Any]:
    """A synchronous commit's outcome (``e`` committed or commit-failed), for the member file."""
    row: dict[str, Any] = {
        "m": name,
        "e": "committed" if error is None else "commit-failed",
        "offsets": {str(p): o for p, o in sorted(offsets.items())},
    }
    if error is not None:
        row["error"] = error[:ERROR_TEXT_LIMIT]
    return row


def assignment_row(
    name: str, event: str, partitions: Iterable[int], member_id: str | None
) -> dict[str, Any]:
    """A rebalance callback (``assigned``, ``revoked`` or ``lost``) with the member id the
    client holds then. librdkafka does not expose the group generation to applications, so
    none is recorded."""
    return {"m": name, "e": event, "ps": sorted(partitions), "member_id": member_id or ""}


class AssignmentDecodeError(ChaosError):
    """A member assignment that is not Kafka's consumer protocol encoding."""


def decode_assignment(data: bytes) -> list[tuple[str, int]]:
    """The (topic, partition)s of a consumer-protocol assignment (the leader's SyncGroup
    bytes for one member). Every version starts with the same fields: int16 version, then
    an int32-counted array of int16-length topic names, each with an int32-counted array of
    int32 partitions; what follows (user data) is not needed. Empty bytes — a member not
    assigned yet — is no partitions."""
    if not data:
        return []
    out: list[tuple[str, int]] = []
    try:
        pos = 2  # the version
        (topics,) = struct.unpack_from(">i", data, pos)
        pos += 4
        if topics < 0 or topics > len(data):
            raise AssignmentDecodeError(f"bad topic count {topics}")
        for _ in range(topics):
            (name_len,) = struct.unpack_from(">h", data, pos)
            pos += 2
            if name_len < 0 or pos + name_len > len(data):
                raise AssignmentDecodeError(f"bad topic name length {name_len}")
            topic = data[pos : pos + name_len].decode("utf-8", errors="replace")
            pos += name_len
            (count,) = struct.unpack_from(">i", data, pos)
            pos += 4
            if count < 0 or pos + 4 * count > len(data):
                raise AssignmentDecodeError(f"bad partition count {count}")
            out += [(topic, p) for p in struct.unpack_from(f">{count}i", data, pos)]
            pos += 4 * count
    except struct.error as exc:
        raise AssignmentDecodeError(f"truncated assignment: {exc}") from None
    return out


def group_sample(
    generation: int, members: Mapping[str, Iterable[tuple[str, int]]], topic: str
) -> dict[str, Any]:
    """A classic group's members and their decoded assignments as a ``group`` history row.

    ``generation`` is what the same node reported just before and just after reading the
    assignments (the sampler records nothing when it changed in between)."""
    owned = {
        member: sorted(p for t, p in assigned if t == topic)
        for member, assigned in sorted(members.items())
    }
    return {"type": "group", "generation": generation, "owned": owned}
