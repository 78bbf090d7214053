"""Deleting consumer groups (Kafka's DeleteGroups): which of the named groups may go.

A group may be deleted when nobody is in it: no members of a consumer-protocol (KIP-848)
group, no members of a classic group and nobody on the way in (a held JoinGroup, a member id
handed out). Deleting removes the group's state and its committed offsets, for both kinds of
groups, with one ``GroupDeleted`` record each, applied by every node like any other metadata
record. A group is known by its members or by its committed offsets; any other id is
GROUP_ID_NOT_FOUND, as in Kafka.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rillet.metadata_quorum.group_records import GroupDeleted
from rillet.metadata_quorum.state import MetadataState
from rillet.wire.error_codes import ErrorCode


@dataclass(frozen=True, slots=True)
class DeletionResult:
    group_id: str
    error: ErrorCode
    message: str | None = None


def decide_deletions(
    state: MetadataState, group_ids: list[str], joining: Callable[[str], bool]
) -> tuple[list[DeletionResult], list[GroupDeleted]]:
    """One result per distinct group id, in the order given, and the records that delete
    the groups that may go. ``joining`` says whether members are on their way into a
    classic group (the coordinator's leader-only memory)."""
    results: list[DeletionResult] = []
    records: list[GroupDeleted] = []
    for gid in dict.fromkeys(group_ids):
        result = _decide(state, gid, joining)
        results.append(result)
        if result.error == ErrorCode.NONE:
            records.append(GroupDeleted(gid))
    return results, records


def _decide(state: MetadataState, gid: str, joining: Callable[[str], bool]) -> DeletionResult:
    if not gid:
        return DeletionResult(gid, ErrorCode.INVALID_GROUP_ID, "the group id is empty")
    groups = state.groups
    kip848 = groups.group(gid)
    classic = state.classic_groups.group(gid)
    if kip848 is None and classic is None and gid not in groups.offsets:
        return DeletionResult(gid, ErrorCode.GROUP_ID_NOT_FOUND, f"no group {gid!r}")
    members = (len(kip848.members) if kip848 is not None else 0) + (
        len(classic.members) if classic is not None else 0
    )
    if members:
        return DeletionResult(
            gid, ErrorCode.GROUP_NOT_EMPTY, f"group {gid!r} has {members} member(s)"
        )
    if (classic is not None and classic.rebalancing) or joining(gid):
        return DeletionResult(gid, ErrorCode.GROUP_NOT_EMPTY, f"members are joining {gid!r}")
    return DeletionResult(gid, ErrorCode.NONE)
