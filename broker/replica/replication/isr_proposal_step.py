"""The ISR manager's two steps around an AlterPartition call, without the call.

Why a module of its own: :class:`~rillet.broker.replica.replication.isr_manager.IsrManager` sends
each proposal to the controller over a trio link, and the replication simulation sends it
over a scheduled network; both must decide the same way what to propose and what the
answer (or its absence) means for the leader. The one bug the simulation found lived here:
a lost answer counted as a refusal, so the leader stopped counting a member the controller
may have added, and acknowledged records were lost when that member was elected next.
These steps take the replica and the answer and touch no socket, clock or task.
"""

from __future__ import annotations

import enum

from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.broker.replica.replication.leader_state import IsrProposal, LeaderState
from rillet.wire.error_codes import ErrorCode


class ProposalSettled(enum.Enum):
    """What an answer did: nothing (the proposal was reconciled or replaced meanwhile),
    or it was accepted, refused, or never came."""

    SUPERSEDED = "superseded"
    ACCEPTED = "accepted"
    REFUSED = "refused"
    UNANSWERED = "unanswered"


def proposal_due(
    replica: PartitionReplica, now_ms: int, lag_max_ms: int, may_remove: bool = True
) -> IsrProposal | None:
    """The ISR change a pass proposes for ``replica``: none unless it leads (and is not
    being deleted); else what its leader state wants (``may_remove`` False: additions
    only, for a leader that may be the one cut off)."""
    if replica.leader is None or replica.deleted:
        return None
    return replica.isr_change(now_ms, lag_max_ms, may_remove=may_remove)


class ProposalSettlement:
    """Settle a proposal by the controller's answer: ``error_code`` None when no answer
    came (the call's deadline passed), with the partition epoch the answer names."""

    def settle(
        self,
        replica: PartitionReplica,
        proposal: IsrProposal,
        error_code: int | None,
        answered_partition_epoch: int = -1,
    ) -> ProposalSettled:
        current = replica.leader
        if current is None or current.pending is not proposal:
            return ProposalSettled.SUPERSEDED  # committed, or a newer state took its place
        self._settle_leader(current, proposal, error_code, answered_partition_epoch)
        if error_code is None:
            return ProposalSettled.UNANSWERED
        if error_code != ErrorCode.NONE:
            return ProposalSettled.REFUSED
        # Accepted: the reconciler applies it shortly and clears the proposal.
        return ProposalSettled.ACCEPTED

    def _settle_leader(
        self,
        leader: LeaderState,
        proposal: IsrProposal,
        error_code: int | None,
        answered_partition_epoch: int,
    ) -> None:
        """The leader core decides (``LeaderState.settle_proposal``); a seam a test may
        replace to show that a wrong settling is caught."""
        if error_code is None:
            leader.settle_proposal(proposal, None)
        else:
            leader.settle_proposal(proposal, error_code, answered_partition_epoch)
