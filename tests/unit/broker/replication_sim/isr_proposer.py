"""The leader's ISR changes: propose a shrink or an expansion to the controller, and
settle the proposal by its answer, its refusal, or its silence.

Why a module of its own: it schedules what replication/isr_manager.py does (through
ControllerLink.call, with its retries on NOT_CONTROLLER): the manager's own steps
(:mod:`rillet.broker.replica.replication.isr_proposal_step`) choose the proposal and settle each
answer. The bug this simulation found lived in that settling: an AlterPartition without
answer must count as "outcome unknown", not "refused"; the old step is kept as a broken
variant (:class:`~.broken_variants.Bug`) that the suite must catch.
"""

from __future__ import annotations

from rillet.broker.cluster.controller_link import next_backoff_s
from rillet.broker.replica.replication.isr_proposal_step import ProposalSettled, proposal_due
from rillet.wire.error_codes import ErrorCode

from .broker_process import BrokerProcess
from .in_flight import AlterCall
from .messages import ControllerReq, ControllerResp
from .topology import CONTROLLER


class IsrProposer(BrokerProcess):
    """The leader's ISR changes, scheduled as replication/isr_manager.py sends them."""

    def isr_check(self) -> None:
        sim = self.sim
        sim.later(self, sim.config.isr_check_ms, self.isr_check)
        r = self.replica
        if self.broker_epoch is None or r is None:
            return
        proposal = proposal_due(r, sim.now, sim.config.lag_max_ms)
        if proposal is None or r.leader is None:
            return
        req = ControllerReq(
            "alter",
            self.node_id,
            sim.next_id(),
            broker_epoch=self.broker_epoch,
            leader_epoch=r.leader.leader_epoch,
            partition_epoch=proposal.partition_epoch,
            isr=proposal.isr,
        )
        self.alter = AlterCall(proposal, req, sim.now + sim.config.request_timeout_ms)
        sim.stats[
            "ISR shrinks proposed"
            if len(proposal.isr) < len(r.leader.isr)
            else "ISR expansions proposed"
        ] += 1
        sim.trace_line(f"{self} proposes ISR {proposal.isr} at pe {proposal.partition_epoch}")
        self._send_alter(self.alter)
        sim.later(self, sim.config.request_timeout_ms, self._alter_deadline, self.alter)

    def _send_alter(self, call: AlterCall) -> None:
        if not call.done:
            self.sim.send(self.node_id, CONTROLLER, self.sim.controller.on_request, call.req)

    def _alter_deadline(self, call: AlterCall) -> None:
        if not call.done:
            self._alter_finished(call, None)  # ControllerUnreachable

    def _alter_answered(self, resp: ControllerResp) -> None:
        call = self.alter
        if call is None or call.done:
            return
        if resp.error == ErrorCode.NOT_CONTROLLER:  # the link tries again until its deadline
            backoff_ms = round(call.backoff_s * 1000)
            if self.sim.now + backoff_ms < call.deadline:
                self.sim.later(self, backoff_ms, self._send_alter, call)
                call.backoff_s = next_backoff_s(call.backoff_s)
            return
        self._alter_finished(call, resp)

    def _alter_finished(self, call: AlterCall, resp: ControllerResp | None) -> None:
        """The tail of IsrManager._propose: its own settling step (the real
        :class:`ProposalSettlement`, or a broken subclass of it: :mod:`.broken_variants`)."""
        call.done = True
        if self.alter is call:
            self.alter = None
        if self.replica is None:
            return
        settlement = self.sim.settlement
        if resp is None:
            settled = settlement.settle(self.replica, call.proposal, None)
        else:
            settled = settlement.settle(
                self.replica, call.proposal, resp.error, resp.partition_epoch
            )
        if settled in (ProposalSettled.REFUSED, ProposalSettled.UNANSWERED):
            self.sim.trace_line(f"{self} ISR proposal {call.proposal.isr} failed: {resp}")
            self.sim.stats[
                "ISR proposals unanswered" if resp is None else "ISR proposals refused"
            ] += 1
