"""A broker's calls to the controller, as ControllerLink.call makes them, over the network.

Why a module of its own: registration, heartbeats and ISR proposals all go through the
controller link, whose retry schedule is the broker's own
:class:`~rillet.broker.cluster.controller_call.ControllerCall` and whose choice of voter is
its :class:`~rillet.broker.cluster.controller_call.VoterChoice` (one per broker process,
kept across calls). This adapter only executes their actions as events: ``Send`` becomes a
message to the voter the choice names (each attempt under its own request id, so a late
answer to an earlier attempt is dropped, as a connection drops an answer to a request it no
longer waits for), with a timer for the per-attempt timeout (the link's request timeout);
``Retry`` is a timer, and the caller's deadline a timer that ends the call without an
answer. A voter that does not lead answers NOT_CONTROLLER naming the leader it knows of.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rillet.broker.cluster.controller_call import (
    ControllerCall,
    Finished,
    Retry,
    Send,
    not_controller_hint,
)

from .messages import ClusterRequest, ClusterResponse, ControllerReq, ControllerResp

if TYPE_CHECKING:
    from .broker_process import BrokerProcess


class SimCall:
    """One call: ``request`` (the same wire request on every attempt), ``finished``
    receives the answer (None: the deadline passed first)."""

    def __init__(
        self,
        process: BrokerProcess,
        request: ClusterRequest,
        deadline_ms: int,
        finished: Callable[[ClusterResponse | None], None],
    ) -> None:
        self._process = process
        self._request = request
        self._deadline_ms = deadline_ms
        self._finished = finished
        self._progress: ControllerCall[ClusterResponse] = ControllerCall(deadline_ms / 1000)
        self._attempt = -1
        self.after_unanswered = False  # how the call ended (Finished.after_unanswered)
        self._voter = -1  # where the current attempt went

    def start(self) -> None:
        self._run(self._progress.start())
        sim = self._process.sim
        sim.later(self._process, self._deadline_ms, self._deadline)

    def answered(self, resp: ControllerResp) -> None:
        """An answer reached the process (a duplicate, or one to an abandoned attempt, is
        dropped)."""
        if self._progress.done or resp.req_id != self._attempt:
            return
        process = self._process
        process.calls.pop(resp.req_id, None)
        self._attempt = -1
        hint = not_controller_hint(resp.response)
        process.voter_choice.answered(self._voter, hint)
        if hint is not None:
            process.sim.stats["controller calls answered NOT_CONTROLLER"] += 1
        now_s = process.sim.now / 1000
        self._run(self._progress.answered(self._voter, resp.response, hint is not None, now_s))

    def _attempt_timed_out(self, attempt: int) -> None:
        """The attempt's request timeout passed without an answer: as a broken attempt."""
        if self._progress.done or attempt != self._attempt:
            return
        process = self._process
        process.calls.pop(attempt, None)
        self._attempt = -1
        process.voter_choice.failed(self._voter)
        process.sim.stats["controller call attempts timed out"] += 1
        now_s = process.sim.now / 1000
        self._run(self._progress.failed(self._voter, "request timed out", now_s))

    def _deadline(self) -> None:
        if not self._progress.done:
            self._process.calls.pop(self._attempt, None)
            self._run(self._progress.deadline_passed())

    def _send(self) -> None:
        if not self._progress.done:
            self._run(Send())

    def _run(self, step: Send | Retry | Finished[ClusterResponse]) -> None:
        process, sim = self._process, self._process.sim
        if isinstance(step, Send):
            self._attempt = sim.next_id()
            process.calls[self._attempt] = self
            req = ControllerReq(process.node_id, self._attempt, self._request)
            self._voter = process.voter_choice.target(None)  # no local quorum on a broker
            voter = sim.controller.voters[self._voter]
            sim.send(process.node_id, self._voter, voter.on_request, req)
            timeout_ms = sim.config.attempt_timeout_ms
            sim.later(process, timeout_ms, self._attempt_timed_out, self._attempt)
        elif isinstance(step, Retry):
            sim.later(process, max(0, round(step.at_s * 1000) - sim.now), self._send)
        else:
            self.after_unanswered = step.after_unanswered
            self._finished(step.response)
