"""The leader's ISR changes: propose a shrink or an expansion to the controller, and
settle the proposal by its answer, its refusal, or its silence.

Why a module of its own: it is the copy of replication/isr_manager.py (through
ControllerLink.call), where the bug this simulation found lived: an AlterPartition without
answer must count as "outcome unknown", not "refused" (``driver_fix``).
"""

from __future__ import annotations

from rillet.wire.error_codes import ErrorCode

from .broker_process import BrokerProcess
from .in_flight import AlterCall
from .messages import ControllerReq, ControllerResp
from .topology import CONTROLLER


class IsrProposer(BrokerProcess):
    """The leader's ISR changes: replication/isr_manager.py through ControllerLink.call."""

    def isr_check(self) -> None:
        sim = self.sim
        sim.later(self, sim.config.isr_check_ms, self.isr_check)
        r = self.replica
        if self.broker_epoch is None or r is None or r.leader is None:
            return
        proposal = r.leader.isr_change(r.log.log_end_offset, sim.now, sim.config.lag_max_ms)
        if proposal is None:
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
            if self.sim.now + call.backoff < call.deadline:
                self.sim.later(self, call.backoff, self._send_alter, call)
                call.backoff = min(call.backoff * 2, 500)
            return
        self._alter_finished(call, resp)

    def _alter_finished(self, call: AlterCall, resp: ControllerResp | None) -> None:
        """The tail of IsrManager._propose: a failure is ``proposal_failed`` only when the
        controller refused the proposal against the partition epoch it was based on; no
        answer, or a refusal naming a newer partition epoch (the answer a retry of an already
        committed proposal gets), is ``proposal_outcome_unknown``: the controller may have
        committed it. ``driver_fix=False`` replays the old behaviour (every failure
        ``proposal_failed``), which lost acknowledged records (the regression test)."""
        call.done = True
        if self.alter is call:
            self.alter = None
        current = self.replica.leader if self.replica is not None else None
        if current is None or current.pending is not call.proposal:
            return
        if resp is None or resp.error != ErrorCode.NONE:
            self.sim.trace_line(f"{self} ISR proposal {call.proposal.isr} failed: {resp}")
            self.sim.stats[
                "ISR proposals unanswered" if resp is None else "ISR proposals refused"
            ] += 1
            refused_as_proposed = resp is not None and (
                resp.partition_epoch == call.proposal.partition_epoch
            )
            if self.sim.driver_fix and not refused_as_proposed:
                current.proposal_outcome_unknown()
            else:
                current.proposal_failed()
        elif resp.partition_epoch <= current.partition_epoch:
            current.proposal_failed()
