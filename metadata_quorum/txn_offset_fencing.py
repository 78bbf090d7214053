"""Zombie fencing of transactional offset commits by the group (KIP-447): a TxnOffsetCommit
that names the committing member and its generation (Kafka's v3, what Kafka Streams'
exactly_once_v2 sends) is refused when a rebalance has since moved the group on, so an
instance that lost its partitions cannot commit their offsets in a transaction still open.
One that names no member (older clients, or a producer outside any group) is not checked
here: its producer epoch fences it, as before. Kafka's rules, for both kinds of group.
"""

from __future__ import annotations

from rillet.metadata_quorum.classic_group_offsets import classic_member_refusal, is_classic_group
from rillet.metadata_quorum.classic_members import classic_member
from rillet.metadata_quorum.state import MetadataState
from rillet.wire.error_codes import ErrorCode


def txn_commit_member_error(
    state: MetadataState,
    group_id: str,
    member_id: str,
    group_instance_id: str | None,
    generation: int,
) -> ErrorCode | None:
    """The error a transactional commit from ``member_id`` at ``generation`` gets, or None."""
    if generation < 0 and not member_id and group_instance_id is None:
        return None
    if is_classic_group(state, group_id):
        refused = classic_member_refusal(state, group_id, member_id, group_instance_id, generation)
        return None if refused is None else refused.error
    found = classic_member(state, group_id, member_id, generation)  # a KIP-848 member here
    return found if isinstance(found, ErrorCode) else None
