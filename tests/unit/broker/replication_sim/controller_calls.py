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

from .messages import ControllerReq, ControllerResp
from .topology import CONTROLLER

if TYPE_CHECKING:
    from .broker_process import BrokerProcess


class SimCall:
    """One call: ``request(req_id)`` builds each attempt, ``finished`` receives the answer
    (None: the deadline passed first)."""

    def __init__(
        self,
        process: BrokerProcess,
        request: Callable[[int], ControllerReq],
        deadline_ms: int,
        finished: Callable[[ControllerResp | None], None],
    ) -> None:
        self._process = process
        self._request = request
        self._deadline_ms = deadline_ms
        self._finished = finished
        self._progress: ControllerCall[ControllerResp] = ControllerCall(deadline_ms / 1000)
        self._attempt = -1

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
        not_controller = resp.error == ErrorCode.NOT_CONTROLLER
        self._run(self._progress.answered(CONTROLLER, resp, not_controller, now_s))

    def _deadline(self) -> None:
        if not self._progress.done:
            self._process.calls.pop(self._attempt, None)
            self._run(self._progress.deadline_passed())

    def _send(self) -> None:
        if not self._progress.done:
            self._run(Send())

    def _run(self, step: Send | Retry | Finished[ControllerResp]) -> None:
        process, sim = self._process, self._process.sim
        if isinstance(step, Send):
            self._attempt = sim.next_id()
            process.calls[self._attempt] = self
            req = self._request(self._attempt)
            sim.send(process.node_id, CONTROLLER, sim.controller.on_request, req)
        elif isinstance(step, Retry):
            sim.later(process, max(0, round(step.at_s * 1000) - sim.now), self._send)
        else:
            self._finished(step.response)
