"""The group coordinator: consumer-group decisions, taken on the controller
(docs/consumer-groups.md).

Members heartbeat with their subscription and the partitions they currently own; the answer
is the assignment they should own. Like Kafka's KIP-848 protocol, assignment is computed here
by a deterministic server-side assignor and reached incrementally:

- a membership or subscription change, a member's expiry or a change in the subscribed
  partitions starts a new *generation* with a new target assignment;
- a member is granted a partition of its target only once no other member owns it, and is
  told to release the partitions that are no longer in its target; it reports the release
  in its next heartbeat. So a partition never has two owners, in any generation.

Every change is a record (``group_records``); liveness is leader-only memory, like broker
leases: each member's session deadline is renewed by its heartbeats, and a new controller
gives every member a full session. Offset commits are fenced: a member may commit only
partitions it owns, and only with a generation at least the one it was last told.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rillet.metadata_quorum.assignors import (
    ASSIGNORS,
    DEFAULT_ASSIGNOR,
    Assignment,
    TopicPartitionId,
    assign,
)
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.group_records import (
    CommittedOffset,
    GroupMember,
    GroupMemberOwned,
    GroupMemberRemoved,
    GroupTargetAssignment,
    OffsetsCommitted,
)
from rillet.metadata_quorum.group_registry import GroupState, to_list
from rillet.metadata_quorum.records import MetadataRecord
from rillet.metadata_quorum.state import MetadataState
from rillet.metadata_quorum.topic_patterns import BadPattern, compile_pattern, matching
from rillet.wire.error_codes import ErrorCode

MIN_SESSION_TIMEOUT_MS = 1_000
MAX_SESSION_TIMEOUT_MS = 300_000
MAX_MEMBER_ID_CHARS = 64  # members make their own ids (a UUID: 32 hex digits)


@dataclass(frozen=True, slots=True)
class MemberHeartbeat:
    group_id: str
    member_id: str
    joining: bool
    client_id: str
    client_host: str
    topics: tuple[str, ...]
    pattern: str | None
    session_timeout_ms: int
    assignor: str
    instance_id: str | None
    owned: frozenset[TopicPartitionId] | None  # None: not reported (keep what is recorded)
    classic_protocol: str | None = None  # a classic member's (GroupMember.classic_protocol)


class GroupCoordinator:
    """Leader-only session deadlines plus pure decision functions over the metadata state."""

    def __init__(
        self, retarget_interval_ms: int = 1_000, connection_lost_grace_ms: int = 500
    ) -> None:
        self._deadline_ms: dict[tuple[str, str], int] = {}
        self._connection_lost_grace_ms = connection_lost_grace_ms
        self._retarget_interval_ms = retarget_interval_ms
        self._next_retarget_ms = 0

    def on_become_leader(self, state: MetadataState, now_ms: int) -> None:
        self._deadline_ms = {
            (gid, mid): now_ms + m.member.session_timeout_ms
            for gid, g in state.groups.groups.items()
            for mid, m in g.members.items()
        }

    # -- membership ---------------------------------------------------------------------------

    def heartbeat(self, state: MetadataState, hb: MemberHeartbeat, now_ms: int) -> Decision:
        refusal = _validate(hb)
        if refusal is not None:
            return refusal
        group = state.groups.group(hb.group_id)
        current = group.members.get(hb.member_id) if group is not None else None
        records: list[MetadataRecord] = []
        previous: dict[str, frozenset[TopicPartitionId]] = dict(group.target) if group else {}
        removed: set[str] = set()
        if hb.joining:
            # A member makes its own id, so a join whose answer was lost (the controller
            # changed while it committed) is sent again as the same member: with a known id
            # it is that member's heartbeat, not a second member holding partitions until
            # its session expires.
            if hb.instance_id is not None and group is not None:
                for mid, m in group.members.items():
                    if mid != hb.member_id and m.member.instance_id == hb.instance_id:
                        # Static membership: the restarted instance takes its predecessor's
                        # place and target; the predecessor's ownership ends now.
                        records.append(GroupMemberRemoved(hb.group_id, mid))
                        removed.add(mid)
                        previous[hb.member_id] = previous.pop(mid, frozenset())
                        self._deadline_ms.pop((hb.group_id, mid), None)
        elif current is None:
            return Decision([], ErrorCode.UNKNOWN_MEMBER_ID, "unknown member (fenced?)")
        member = _member_record(hb)
        if current is None or current.member != member:
            records.append(member)
        self._deadline_ms[(hb.group_id, hb.member_id)] = now_ms + hb.session_timeout_ms
        subscriptions = member_subscriptions(state, group, removed, member)
        generation = group.generation if group is not None else 0
        target = self._target(state, group, subscriptions, previous, member.assignor)
        if group is None or target != group.target or records:
            generation += 1
            records.append(_target_record(hb.group_id, generation, member.assignor, target))
        records += _reconcile(group, hb, removed, target, generation)
        return Decision(records)

    def connection_lost(
        self, state: MetadataState, group_id: str, member_id: str, now_ms: int
    ) -> None:
        """The member's connection to the coordinator closed (its process likely died):
        expire it after a short grace unless it heartbeats again. Static members keep their
        whole session: they are expected back after a restart."""
        group = state.groups.group(group_id)
        member = group.members.get(member_id) if group is not None else None
        if member is None or member.member.instance_id is not None:
            return
        key = (group_id, member_id)
        at = now_ms + self._connection_lost_grace_ms
        self._deadline_ms[key] = min(self._deadline_ms.get(key, at), at)

    def renew(self, group_id: str, member_id: str, session_timeout_ms: int, now_ms: int) -> None:
        """A classic member's Heartbeat: its session goes on (its assignment changes only
        when it joins again)."""
        self._deadline_ms[(group_id, member_id)] = now_ms + session_timeout_ms

    def leave(self, state: MetadataState, group_id: str, member_id: str) -> Decision:
        group = state.groups.group(group_id)
        if group is None or member_id not in group.members:
            return Decision([], ErrorCode.UNKNOWN_MEMBER_ID, "unknown member")
        self._deadline_ms.pop((group_id, member_id), None)
        return Decision(self._remove(state, group, {member_id}))

    def tick(self, state: MetadataState, now_ms: int) -> Decision:
        """Expire members whose session passed; re-target groups whose subscribed partitions
        changed (topics created, deleted or given more partitions)."""
        records: list[MetadataRecord] = []
        retarget = now_ms >= self._next_retarget_ms
        if retarget:
            self._next_retarget_ms = now_ms + self._retarget_interval_ms
        for group_id, group in sorted(state.groups.groups.items()):
            expired = {
                mid
                for mid, m in group.members.items()
                if self._deadline_ms.setdefault(
                    (group_id, mid), now_ms + m.member.session_timeout_ms
                )
                <= now_ms
            }
            for mid in expired:
                del self._deadline_ms[(group_id, mid)]
            if expired:
                records += self._remove(state, group, expired)
            elif group.members and retarget:
                subscriptions = member_subscriptions(state, group, set(), None)
                target = self._target(state, group, subscriptions, dict(group.target), "")
                if target != group.target:
                    records.append(
                        _target_record(group_id, group.generation + 1, group.assignor, target)
                    )
        return Decision(records)

    def _remove(
        self, state: MetadataState, group: GroupState, gone: set[str]
    ) -> list[MetadataRecord]:
        records: list[MetadataRecord] = [
            GroupMemberRemoved(group.group_id, m) for m in sorted(gone)
        ]
        subscriptions = member_subscriptions(state, group, gone, None)
        previous = {m: t for m, t in group.target.items() if m not in gone}
        target = self._target(state, group, subscriptions, previous, "")
        records.append(_target_record(group.group_id, group.generation + 1, group.assignor, target))
        return records

    def _target(
        self,
        state: MetadataState,
        group: GroupState | None,
        subscriptions: dict[str, frozenset[str]],
        previous: Assignment,
        requested: str,
    ) -> Assignment:
        name = group.assignor if group is not None and group.assignor else ""
        name = name or requested or DEFAULT_ASSIGNOR
        counts: dict[str, int] = {}
        for topic_id, _ in state.partitions:
            counts[topic_id] = counts.get(topic_id, 0) + 1
        return assign(name, subscriptions, counts, previous)

    # -- offsets ------------------------------------------------------------------------------

    def commit_offsets(
        self,
        state: MetadataState,
        group_id: str,
        member_id: str,
        generation: int,
        offsets: list[tuple[str, int, int, str]],
        now_ms: int,
        errors: dict[tuple[str, int], ErrorCode],
        leader_epochs: Mapping[tuple[str, int], int] | None = None,
    ) -> Decision:
        """Commit (topic name, partition, offset, metadata) tuples, each with its leader epoch
        from ``leader_epochs`` (-1 when absent); per-partition refusals go to ``errors``.
        Fenced: only an owner commits while the group has members; with no members (tools,
        batch jobs) anyone may."""
        group = state.groups.group(group_id)
        member = group.members.get(member_id) if group is not None else None
        if group is not None and group.members and member is None:
            code = ErrorCode.UNKNOWN_MEMBER_ID
            return Decision([], code, "the group has members; this is not one of them")
        if member is not None and 0 <= generation < member.generation:
            return Decision([], ErrorCode.ILLEGAL_GENERATION, "stale generation")
        accepted: list[CommittedOffset] = []
        for topic, partition, offset, metadata in offsets:
            topic_id = state.topic_ids.get(topic)
            if topic_id is None or (topic_id, partition) not in state.partitions:
                errors[(topic, partition)] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif offset < 0:
                errors[(topic, partition)] = ErrorCode.INVALID_REQUEST
            elif member is not None and (topic_id, partition) not in member.owned:
                errors[(topic, partition)] = ErrorCode.ILLEGAL_GENERATION
            else:
                epoch = (leader_epochs or {}).get((topic, partition), -1)
                accepted.append(
                    CommittedOffset(topic_id, partition, offset, metadata, now_ms, epoch)
                )
        return Decision([OffsetsCommitted(group_id, accepted)] if accepted else [])


def _validate(hb: MemberHeartbeat) -> Decision | None:
    if not hb.group_id or not hb.member_id:
        return Decision([], ErrorCode.INVALID_REQUEST, "group id and member id are required")
    if len(hb.member_id) > MAX_MEMBER_ID_CHARS:
        return Decision(
            [], ErrorCode.INVALID_REQUEST, f"member id longer than {MAX_MEMBER_ID_CHARS} characters"
        )
    if not MIN_SESSION_TIMEOUT_MS <= hb.session_timeout_ms <= MAX_SESSION_TIMEOUT_MS:
        return Decision(
            [],
            ErrorCode.INVALID_SESSION_TIMEOUT,
            f"session_timeout_ms must be in [{MIN_SESSION_TIMEOUT_MS}, {MAX_SESSION_TIMEOUT_MS}]",
        )
    if hb.assignor and hb.assignor not in ASSIGNORS:
        known = ", ".join(sorted(ASSIGNORS))
        return Decision([], ErrorCode.INVALID_REQUEST, f"unknown assignor (known: {known})")
    if hb.pattern is not None:
        try:
            compile_pattern(hb.pattern)
        except BadPattern as exc:
            return Decision([], ErrorCode.INVALID_REQUEST, f"bad pattern: {exc}")
    return None


def _member_record(hb: MemberHeartbeat) -> GroupMember:
    return GroupMember(
        hb.group_id,
        hb.member_id,
        hb.client_id,
        hb.client_host,
        sorted(hb.topics),
        hb.pattern,
        hb.session_timeout_ms,
        hb.assignor or DEFAULT_ASSIGNOR,
        hb.instance_id,
        hb.classic_protocol,
    )


def member_subscriptions(
    state: MetadataState, group: GroupState | None, removed: set[str], joined: GroupMember | None
) -> dict[str, frozenset[str]]:
    """The topic ids each member reads (by name or by pattern), without the ``removed``
    members and with ``joined`` as it is now: what the assignor assigns, and what
    OffsetDelete keeps."""
    members = {
        mid: m.member for mid, m in (group.members.items() if group else []) if mid not in removed
    }
    if joined is not None:
        members[joined.member_id] = joined
    out: dict[str, frozenset[str]] = {}
    for mid, m in members.items():
        ids = {state.topic_ids[t] for t in m.topics if t in state.topic_ids}
        if m.pattern is not None:
            ids |= matching(m.pattern, state.topic_ids)
        out[mid] = frozenset(ids)
    return out


def _target_record(
    group_id: str, generation: int, assignor: str, target: Assignment
) -> GroupTargetAssignment:
    return GroupTargetAssignment(
        group_id,
        generation,
        assignor or DEFAULT_ASSIGNOR,
        {m: to_list(parts) for m, parts in sorted(target.items())},
    )


def _reconcile(
    group: GroupState | None,
    hb: MemberHeartbeat,
    removed: set[str],
    target: Assignment,
    generation: int,
) -> list[MetadataRecord]:
    """This member's ownership after its heartbeat: what it released goes, and it is granted
    the partitions of its target that no other member owns."""
    current = group.members.get(hb.member_id) if group is not None else None
    recorded = current.owned if current is not None else frozenset()
    owned = recorded & hb.owned if hb.owned is not None else recorded
    others: set[TopicPartitionId] = set()
    if group is not None:
        for mid, m in group.members.items():
            if mid != hb.member_id and mid not in removed:
                others |= m.owned
    grant = target.get(hb.member_id, frozenset()) - owned - others
    new_owned = owned | grant
    told = current.generation if current is not None else -1
    if new_owned == recorded and told == generation:
        return []
    return [GroupMemberOwned(hb.group_id, hb.member_id, generation, to_list(new_owned))]


@dataclass(frozen=True, slots=True)
class MemberAssignment:
    """What a heartbeat answers: the generation, the partitions the member should own now,
    and whether it is still converging (then it should heartbeat again soon)."""

    generation: int
    assigned: frozenset[TopicPartitionId]
    converging: bool


def member_assignment(
    state: MetadataState, group_id: str, member_id: str
) -> MemberAssignment | None:
    """The member's assignment in the committed state: what it owns and may keep (its target
    minus what it must release). None for an unknown member."""
    group = state.groups.group(group_id)
    member = group.members.get(member_id) if group is not None else None
    if group is None or member is None:
        return None
    target = group.target.get(member_id, frozenset())
    assigned = member.owned & target
    return MemberAssignment(
        group.generation, assigned, assigned != target or member.owned != target
    )
