"""A broker's calls to the controller, as ControllerLink.call makes them, over the network.

Why a module of its own: registration, heartbeats and ISR proposals all go through the
controller link, whose retry schedule is the broker's own
:class:`~rillet.broker.cluster.controller_call.ControllerCall`. This adapter only executes
its actions as events: ``Send`` becomes a message (each attempt under its own request id,
so a late answer to an earlier attempt is dropped, as a connection drops an answer to a
request it no longer waits for), ``Retry`` a timer, and the caller's deadline a timer that
ends the call without an answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rillet.broker.cluster.controller_call import ControllerCall, Finished, Retry, Send
from rillet.wire.error_codes import ErrorCode

from .messages import ClusterRequest, ClusterResponse, ControllerReq, ControllerResp
from .topology import VOTERS

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
        self._voter = VOTERS[0]  # where the current attempt went

    def start(self) -> None:
        self._run(self._progress.start())
        sim = self._process.sim
        sim.later(self._process, self._deadline_ms, self._deadline)

    def answered(self, resp: ControllerResp) -> None:
        """An answer reached the process (a duplicate, or one to an abandoned attempt, is
        dropped)."""
        if self._progress.done or resp.req_id != self._attempt:
            return
        self._process.calls.pop(resp.req_id, None)
        now_s = self._process.sim.now / 1000
        not_controller = resp.response.error_code == ErrorCode.NOT_CONTROLLER
        self._run(self._progress.answered(self._voter, resp.response, not_controller, now_s))

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
            leader = sim.controller.cluster.leader_id
            self._voter = VOTERS[0] if leader is None else leader
            voter = sim.controller.voters[self._voter]
            sim.send(process.node_id, self._voter, voter.on_request, req)
        elif isinstance(step, Retry):
            sim.later(process, max(0, round(step.at_s * 1000) - sim.now), self._send)
        else:
            self._finished(step.response)
