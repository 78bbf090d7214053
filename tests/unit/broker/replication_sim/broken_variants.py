"""Deliberately broken leaders, selectable per run.

Why they exist: a checker that never fails proves nothing. The test suite runs each variant
over a small sweep and requires some seed to be caught (and the same seed to pass when
nothing is broken), so the invariants are shown to bite. Each variant breaks the real code
from outside: a changed request, an extra call, or a subclass of the real replica or of a
real driver step; nothing in the production packages knows of them.
"""

from __future__ import annotations

import dataclasses
import enum

from rillet.broker.cluster.controller_call import VoterChoice
from rillet.broker.cluster.metadata_poll import Fetch, MetadataPoll
from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.broker.replica.replication.isr_proposal_step import (
    IsrProposalCycle,
    ProposalSettled,
    ProposalSettlement,
)
from rillet.broker.replica.replication.leader_state import IsrProposal, LeaderState
from rillet.wire.error_codes import ErrorCode


class Bug(enum.Enum):
    """Deliberately broken variants: each must be caught by some seed, or the checker is
    not checking what it claims to."""

    # The leader counts a follower at the end of the records it sends, before the follower
    # has them (the follower's fetch offset is the only proof of what it holds).
    EARLY_FOLLOWER_LEO = "early-follower-leo"
    # The leader skips the divergence check: a follower keeps a diverging suffix and
    # appends the leader's records after it.
    NO_DIVERGENCE_CHECK = "no-divergence-check"
    # The leader counts its whole log towards the high watermark although the topic's
    # flush policy makes acks=all wait for the fsync (once caused by reading flush_ms = 0
    # as "no policy").
    ACK_BEFORE_FSYNC = "ack-before-fsync"
    # A driver step: the ISR manager's settling counts an AlterPartition without answer (or
    # refused against a newer partition epoch) as refused, so the leader stops counting a
    # member the controller may have added (the bug this simulation found; the old step).
    LOST_ALTER_ANSWER_REFUSED = "lost-alter-answer-refused"
    # A driver's control flow: the ISR proposal cycle ends an AlterPartition call that went
    # unanswered until its deadline, or was refused after an unanswered attempt, as if the
    # controller had refused it (a timeout read as a refusal), so the leader stops counting
    # a member the controller may have added.
    UNANSWERED_ALTER_CALL_REFUSED = "unanswered-alter-call-refused"
    # A driver step: the controller link's voter choice sticks to the voter that answered
    # as the controller last, whatever NOT_CONTROLLER answers name and however its attempts
    # fail, so a broker goes on calling a deposed controller.
    STICKY_VOTER_CHOICE = "sticky-voter-choice"
    # A driver's control flow: the metadata read sends its fetch again after one went
    # unanswered, but from one entry further (an off-by-one in the retry), so a broker
    # whose fetch timed out skips an entry and goes on believing in a leader, an ISR or a
    # leader epoch the log moved past.
    METADATA_RETRY_SKIPS_AN_ENTRY = "metadata-retry-skips-an-entry"


class _EveryFailureRefused(ProposalSettlement):
    def _settle_leader(
        self,
        leader: LeaderState,
        proposal: IsrProposal,
        error_code: int | None,
        answered_partition_epoch: int,
    ) -> None:
        if error_code is None or error_code != ErrorCode.NONE:
            leader.proposal_failed()
        else:
            super()._settle_leader(leader, proposal, error_code, answered_partition_epoch)


class _TimeoutReadAsRefusal(IsrProposalCycle):
    def finish(
        self,
        error_code: int | None,
        answered_partition_epoch: int = -1,
        after_unanswered: bool = False,
    ) -> ProposalSettled:
        if error_code is None:  # refused against the proposal's own partition epoch
            return super().finish(ErrorCode.REQUEST_TIMED_OUT, self.proposal.partition_epoch)
        # An earlier unanswered attempt is read as refused too: the later refusal counts.
        return super().finish(error_code, answered_partition_epoch)


class _StickToTheLastController(VoterChoice):
    def target(self, local: int | None) -> int:
        if self.answered_by is not None:
            return self.answered_by
        return super().target(local)


class _AckBeforeFsync(PartitionReplica):
    @property
    def local_committable_end(self) -> int:
        return self.log.log_end_offset


class _RetryPastTheNextEntry(MetadataPoll):
    def unanswered(self) -> Fetch:
        fetch = super().unanswered()
        return dataclasses.replace(fetch, after_index=fetch.after_index + 1)


def replica_type_for(bug: Bug | None) -> type[PartitionReplica]:
    """The replica class a run uses: the real one, or a broken subclass of it."""
    return _AckBeforeFsync if bug is Bug.ACK_BEFORE_FSYNC else PartitionReplica


def settlement_for(bug: Bug | None) -> ProposalSettlement:
    """The ISR manager's settling step a run uses: the real one, or the old broken one."""
    return _EveryFailureRefused() if bug is Bug.LOST_ALTER_ANSWER_REFUSED else ProposalSettlement()


def cycle_type_for(bug: Bug | None) -> type[IsrProposalCycle]:
    """The ISR proposal cycle a run uses: the real one, or one that reads a timeout as a
    refusal."""
    return _TimeoutReadAsRefusal if bug is Bug.UNANSWERED_ALTER_CALL_REFUSED else IsrProposalCycle


def voter_choice_type_for(bug: Bug | None) -> type[VoterChoice]:
    """The controller link's voter choice a run uses: the real one, or one that sticks to
    the last voter that answered as the controller."""
    return _StickToTheLastController if bug is Bug.STICKY_VOTER_CHOICE else VoterChoice


def poll_type_for(bug: Bug | None) -> type[MetadataPoll]:
    """The metadata read a run uses: the real one, or one whose retry skips an entry."""
    return _RetryPastTheNextEntry if bug is Bug.METADATA_RETRY_SKIPS_AN_ENTRY else MetadataPoll
