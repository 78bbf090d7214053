"""The classic-group responses the coordinator answers with."""

from __future__ import annotations

from typing import Any

from rillet.metadata_quorum.classic_group_registry import ClassicGroupState
from rillet.wire import classic_group_messages as cgm
from rillet.wire.error_codes import ErrorCode


def failed(response: Any) -> Any:
    """The same kind of response, saying the coordinator is gone (the client re-sends)."""
    return type(response)(int(ErrorCode.NOT_COORDINATOR), error_message="coordinator moved")


def join_error(
    code: ErrorCode, message: str | None = None, member_id: str = ""
) -> cgm.ClassicJoinGroupResponse:
    return cgm.ClassicJoinGroupResponse(code, member_id=member_id, error_message=message)


def sync_error(code: ErrorCode, message: str | None = None) -> cgm.ClassicSyncGroupResponse:
    return cgm.ClassicSyncGroupResponse(code, error_message=message)


def sync_answer(g: ClassicGroupState, member_id: str) -> cgm.ClassicSyncGroupResponse:
    assignment = g.members[member_id].assignment
    return cgm.ClassicSyncGroupResponse(
        ErrorCode.NONE, g.protocol_type, g.protocol_name, assignment
    )


def current_generation(
    g: ClassicGroupState, member_id: str, leader_answered: str
) -> cgm.ClassicJoinGroupResponse:
    """The join answer of the generation in force (a member re-sent an unchanged join)."""
    listed = []
    if member_id == leader_answered:
        listed = [
            cgm.ClassicJoinedMember(
                mid, m.member.group_instance_id, m.member.metadata_for(g.protocol_name)
            )
            for mid, m in g.members.items()
        ]
    return cgm.ClassicJoinGroupResponse(
        ErrorCode.NONE,
        g.generation,
        g.protocol_type,
        g.protocol_name,
        leader_answered,
        member_id,
        listed,
    )
