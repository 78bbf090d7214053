"""An ISR proposal refused after one of its attempts went unanswered is not settled as
refused: the controller may still carry out that attempt (seeds 692 and 1153 of the
replication simulation's 10,000-seed sweep, where the unanswered copy was accepted once
the new member was unfenced, while the leader had stopped counting it)."""

from __future__ import annotations

from pathlib import Path

from broker_context import middle

from rillet.broker.replica.replication.isr_proposal_step import (
    IsrProposalCycle,
    ProposalSettled,
    ProposalSettlement,
)
from rillet.broker.replica.replication.leader_state import IsrProposal
from rillet.wire.error_codes import ErrorCode


def _cycle(tmp_path: Path) -> IsrProposalCycle:
    m = middle(tmp_path)
    replica = m.host("t", 0, isr=(1, 2), replicas=(1, 2, 3))
    leader = replica.leader
    assert leader is not None
    leader.pending = IsrProposal((1, 2, 3), leader.partition_epoch)
    cycle = IsrProposalCycle.begin(replica, leader.pending, ProposalSettlement())
    assert cycle is not None
    return cycle


async def test_a_refusal_after_an_unanswered_attempt_leaves_the_outcome_open(
    tmp_path: Path,
) -> None:
    cycle = _cycle(tmp_path)
    epoch = cycle.proposal.partition_epoch
    settled = cycle.finish(ErrorCode.INVALID_REQUEST, epoch, after_unanswered=True)
    assert settled is ProposalSettled.UNANSWERED
    leader = cycle.replica.leader
    assert leader is not None
    assert leader.unconfirmed is not None and 3 in leader.maximal_isr


async def test_a_refusal_of_the_only_attempt_is_final(tmp_path: Path) -> None:
    cycle = _cycle(tmp_path)
    epoch = cycle.proposal.partition_epoch
    assert cycle.finish(ErrorCode.INVALID_REQUEST, epoch) is ProposalSettled.REFUSED
    leader = cycle.replica.leader
    assert leader is not None
    assert leader.unconfirmed is None and 3 not in leader.maximal_isr
