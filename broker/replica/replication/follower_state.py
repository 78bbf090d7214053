"""What a follower does with its leader's answer for one partition: the pure decisions.

A follower's log must never keep a suffix its leader does not have (docs/replication.md). The leader
says where they diverge (an epoch and the offset where that epoch ends in the leader's log);
the follower cuts its log there, or earlier where its own history of that epoch ends earlier
(KIP-279), and fetches again. An offset out of range means the follower is past the leader's
end (cut back to it) or before the leader's log start (start over empty at it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rillet.wire.error_codes import ErrorCode


@dataclass(frozen=True, slots=True)
class OutOfRangeStep:
    """Truncate to an offset, restart empty at one, or neither (back off and retry)."""

    truncate_to: int | None = None
    restart_at: int | None = None


def divergence_truncation_offset(
    leader_epoch: int,
    leader_end_offset: int,
    own_end_for_epoch: Callable[[int], tuple[int, int]],
    own_log_end_offset: int,
) -> int:
    """Where to cut the follower's log, told that it diverges at (epoch, end offset).

    Without an epoch (-1) the leader's offset is its high watermark, a safe floor. With
    one, the follower cuts at the smaller of the leader's end of that epoch and its own end
    of the largest epoch it has not above it (where its history leaves the leader's).
    """
    target = leader_end_offset
    if leader_epoch >= 0:
        own_epoch, own_end = own_end_for_epoch(leader_epoch)
        if own_epoch >= 0 and own_end >= 0:
            target = min(target, own_end)
    return max(0, min(target, own_log_end_offset))


def plan_out_of_range(
    error_code: int,
    own_log_end_offset: int,
    leader_log_start_offset: int,
    leader_log_end_offset: int,
) -> OutOfRangeStep:
    """The follower's move for an error answer: only OFFSET_OUT_OF_RANGE changes the log."""
    if error_code == ErrorCode.OFFSET_OUT_OF_RANGE:
        if 0 <= leader_log_end_offset < own_log_end_offset:
            return OutOfRangeStep(truncate_to=leader_log_end_offset)
        if own_log_end_offset < leader_log_start_offset:
            return OutOfRangeStep(restart_at=leader_log_start_offset)
    return OutOfRangeStep()
