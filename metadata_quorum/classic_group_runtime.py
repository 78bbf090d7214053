"""Leader-only memory of classic groups, and one decision's view of a group.

A :class:`Runtime` holds what is not in the metadata log: held JoinGroup and SyncGroup
tickets, session deadlines, member ids handed out with MEMBER_ID_REQUIRED, the open join
round's deadlines. It remembers the durable generation and rebalancing flag it was built on;
when the committed state disagrees (a decision of this controller was not committed), the
coordinator drops it and rebuilds it from the registry. A :class:`Txn` applies the records a
decision emits to a scratch copy of the group, so later steps of the same decision see the
state those records will make.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rillet.metadata_quorum.classic_group_records import ClassicMember
from rillet.metadata_quorum.classic_group_registry import (
    ClassicGroupRecord,
    ClassicGroupRegistry,
    ClassicGroupState,
    ClassicMemberState,
)
from rillet.metadata_quorum.classic_group_replies import join_error, sync_error
from rillet.metadata_quorum.records import MetadataRecord
from rillet.wire import classic_group_messages as cgm
from rillet.wire.error_codes import ErrorCode

Answer = tuple[int, Any]  # (ticket, response message)


@dataclass(slots=True)
class Joining:
    member: ClassicMember
    ticket: int


@dataclass(slots=True)
class Runtime:
    """Leader-only state of one group, built on the durable state it last saw."""

    generation: int
    rebalancing: bool
    in_round: bool = False
    round_started_ms: int = 0
    round_deadline_ms: int = 0
    not_before_ms: int = 0
    protocol_type: str = ""
    joined: dict[str, Joining] = field(default_factory=dict)  # in join order
    awaiting_sync: dict[str, int] = field(default_factory=dict)
    sync_deadline_ms: int = 0
    pending_ids: dict[str, int] = field(default_factory=dict)  # MEMBER_ID_REQUIRED -> expiry
    sessions: dict[str, int] = field(default_factory=dict)


class Txn:
    """One decision on one group."""

    def __init__(self, group: ClassicGroupState, rt: Runtime) -> None:
        self.records: list[MetadataRecord] = []
        self._scratch = ClassicGroupRegistry()
        self._scratch.groups[group.group_id] = group
        self.gid = group.group_id
        self.rt = rt

    @property
    def group(self) -> ClassicGroupState:
        return self._scratch.groups[self.gid]

    def emit(self, record: ClassicGroupRecord) -> None:
        self.records.append(record)
        self._scratch.apply(record)


def fresh_runtime(durable: ClassicGroupState | None, now_ms: int) -> Runtime:
    if durable is None:
        return Runtime(0, False)
    rt = Runtime(durable.generation, durable.rebalancing)
    rt.sessions = {mid: now_ms + m.member.session_timeout_ms for mid, m in durable.members.items()}
    wait_ms = durable.max_rebalance_timeout_ms()
    rt.sync_deadline_ms = now_ms + wait_ms
    if durable.rebalancing:
        rt.in_round = True
        rt.round_started_ms = rt.not_before_ms = now_ms
        rt.round_deadline_ms = now_ms + wait_ms
        rt.protocol_type = durable.protocol_type
    return rt


def copy_group(durable: ClassicGroupState | None, group_id: str) -> ClassicGroupState:
    if durable is None:
        return ClassicGroupState(group_id)
    members = {
        mid: ClassicMemberState(m.member, m.assignment) for mid, m in durable.members.items()
    }
    return ClassicGroupState(
        durable.group_id,
        durable.generation,
        durable.protocol_type,
        durable.protocol_name,
        durable.leader_id,
        members,
        durable.synced,
        durable.rebalancing,
    )


def due(rt: Runtime, g: ClassicGroupState, now_ms: int) -> bool:
    if rt.in_round or rt.generation != g.generation or rt.rebalancing != g.rebalancing:
        return True
    if any(expiry <= now_ms for expiry in rt.pending_ids.values()):
        return True
    if g.phase == cgm.COMPLETING_REBALANCE and now_ms >= rt.sync_deadline_ms:
        return True
    return any(
        rt.sessions.get(mid, now_ms) <= now_ms for mid in g.members if mid not in rt.awaiting_sync
    )


def members_of(txn: Txn) -> dict[str, ClassicMember]:
    out = {mid: m.member for mid, m in txn.group.members.items()}
    out.update((mid, j.member) for mid, j in txn.rt.joined.items())
    return out


def instance_owner(txn: Txn, instance_id: str) -> str | None:
    for mid, m in members_of(txn).items():
        if m.group_instance_id == instance_id:
            return mid
    return None


def check_member(
    txn: Txn, member_id: str, instance_id: str | None, generation: int
) -> tuple[ErrorCode, str] | None:
    g = txn.group
    if instance_id is not None:
        owner = g.member_of_instance(instance_id)
        if owner is not None and owner != member_id:
            return ErrorCode.FENCED_INSTANCE_ID, "another member has the instance id"
    if member_id not in g.members:
        if member_id in txn.rt.joined:
            return ErrorCode.REBALANCE_IN_PROGRESS, "the member's join is not complete"
        return ErrorCode.UNKNOWN_MEMBER_ID, "unknown member id"
    if generation != g.generation:
        return ErrorCode.ILLEGAL_GENERATION, f"the generation is {g.generation}"
    return None


def fail_held(rt: Runtime) -> list[Answer]:
    gone = ErrorCode.NOT_COORDINATOR
    out: list[Answer] = [
        (j.ticket, join_error(gone, "coordinator moved")) for j in rt.joined.values()
    ]
    out += [(t, sync_error(gone, "coordinator moved")) for t in rt.awaiting_sync.values()]
    rt.joined, rt.awaiting_sync = {}, {}
    return out
