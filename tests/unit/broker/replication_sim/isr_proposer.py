"""The leader's ISR changes, scheduled as replication/isr_manager.py makes them.

Why a module of its own: it executes, as events, what the ISR manager's own steps decide
(:mod:`rillet.broker.replica.replication.isr_proposal_step`): a pass every check interval
asks :func:`proposal_due` (no removals while the membership hears no controller), each
proposal is an :class:`IsrProposalCycle` whose AlterPartition goes through a
:class:`~.controller_calls.SimCall` (the link's own retry schedule), and the cycle settles
the leader by the call's end. The bug this simulation found lived in that settling (a lost
answer counted as refused); broken variants of it (:mod:`.broken_variants`) must be caught.
"""

from __future__ import annotations

from rillet.broker.replica.replication.isr_proposal_step import (
    IsrProposalCycle,
    ProposalSettled,
    proposal_due,
)
from rillet.wire.cluster_messages import AlterPartitionRequest, AlterPartitionResponse

from .broker_process import BrokerProcess
from .controller_calls import SimCall
from .messages import ClusterResponse
from .topology import CLUSTER_ID, TOPIC


class IsrProposer(BrokerProcess):
    """IsrManager.run's pass and _propose, scheduled."""

    def isr_check(self) -> None:
        sim = self.sim
        sim.later(self, sim.config.isr_check_ms, self.isr_check)
        r = self.replica
        epoch = self.membership.broker_epoch
        if epoch is None or r is None:
            return
        deaf = not self.membership.hears_controller(sim.now / 1000)
        proposal = proposal_due(r, sim.now, sim.config.lag_max_ms, may_remove=not deaf)
        if proposal is None:
            return
        cycle = sim.cycle_type.begin(r, proposal, sim.settlement)
        if cycle is None:
            return
        sim.stats[
            "ISR shrinks proposed"
            if len(proposal.isr) < len(cycle.old_isr)
            else "ISR expansions proposed"
        ] += 1
        sim.trace_line(f"{self} proposes ISR {proposal.isr} at pe {proposal.partition_epoch}")

        topic = self.metadata.topic_by_name(TOPIC)
        assert topic is not None  # a replica exists once its partition is in the metadata
        request = AlterPartitionRequest(
            CLUSTER_ID, b"", self.node_id, epoch, topic.topic_id, 0, cycle.leader_epoch,
            proposal.partition_epoch, list(proposal.isr),
        )  # fmt: skip
        call = SimCall(
            self,
            request,
            sim.config.request_timeout_ms,
            lambda resp: self._alter_finished(cycle, resp, call.after_unanswered),
        )
        call.start()

    def _alter_finished(
        self, cycle: IsrProposalCycle, resp: ClusterResponse | None, after_unanswered: bool
    ) -> None:
        """The tail of IsrManager._propose: the cycle settles the leader."""
        if resp is None:
            settled = cycle.finish(None)
        else:
            assert isinstance(resp, AlterPartitionResponse)
            settled = cycle.finish(resp.error_code, resp.partition_epoch, after_unanswered)
        if settled in (ProposalSettled.REFUSED, ProposalSettled.UNANSWERED):
            self.sim.trace_line(f"{self} ISR proposal {cycle.proposal.isr} failed: {resp}")
            self.sim.stats[
                "ISR proposals unanswered" if resp is None else "ISR proposals refused"
            ] += 1
