"""The ISR manager's steps around an AlterPartition call, without the call.

Why a module of its own: :class:`~rillet.broker.replica.replication.isr_manager.IsrManager` sends
each proposal to the controller over a trio link, and the replication simulation sends it
over a scheduled network; both must decide the same way what to propose
(:func:`proposal_due`), what the call asks for and what its end (an answer, a refusal, or
none before the deadline) does to the leader (:class:`IsrProposalCycle`, settling by
:class:`ProposalSettlement`). The one bug the simulation found lived here:
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


class IsrProposalCycle:
    """One ISR proposal from its AlterPartition call to its settling: what the call asks
    for (the leader epoch and the ISR it replaces, taken when it starts) and what the
    call's end (an answer, a refusal, or none before the deadline) does to the leader.
    ``IsrManager._propose`` runs it over the controller link, the replication simulation
    over its network; a broken subclass shows the simulation catches a wrong ending."""

    def __init__(
        self,
        replica: PartitionReplica,
        leader: LeaderState,
        proposal: IsrProposal,
        settlement: ProposalSettlement,
    ) -> None:
        self.replica = replica
        self.proposal = proposal
        self.leader_epoch = leader.leader_epoch
        self.old_isr = leader.isr
        self._settlement = settlement

    @classmethod
    def begin(
        cls, replica: PartitionReplica, proposal: IsrProposal, settlement: ProposalSettlement
    ) -> IsrProposalCycle | None:
        """The cycle for ``proposal``, or None when the replica no longer leads."""
        leader = replica.leader
        if leader is None:
            return None
        return cls(replica, leader, proposal, settlement)

    def finish(
        self,
        error_code: int | None,
        answered_partition_epoch: int = -1,
        after_unanswered: bool = False,
    ) -> ProposalSettled:
        """The call ended: with the controller's answer (its error code and the partition
        epoch it names), or with none (``error_code`` None: the deadline passed first).

        ``after_unanswered``: an earlier attempt of the call got no answer. A refusal then
        leaves the outcome open like no answer at all: the controller may still carry out
        that attempt once it would no longer refuse (a fenced member unfenced meanwhile),
        and the leader, taking the refusal as final, would stop counting a member the
        committed ISR then holds (the replication simulation's seeds 692, 1153 and 2949)."""
        refused = error_code is not None and error_code != ErrorCode.NONE
        if error_code is None or (refused and after_unanswered):
            return self._settlement.settle(self.replica, self.proposal, None)
        return self._settlement.settle(
            self.replica, self.proposal, error_code, answered_partition_epoch
        )
