"""A dispatcher that times every request for /metrics, by listener and api.

A subclass rather than a change to the dispatcher: the routing stays where it is, and a node
without the HTTP endpoint runs the plain dispatcher. A deferred answer (a coroutine the
connection awaits later) is wrapped in :class:`TimedReply`, which observes the latency when
the answer is ready, or counts an error when it fails; closing it (the connection went away)
closes the wrapped coroutine and observes nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rillet.broker.dispatcher import Dispatcher, PendingReply
from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.deferred import Deferred
from rillet.broker.handlers.driving_reply import DrivingReply
from rillet.broker.handlers.unanswered import Unanswered
from rillet.broker.http.request_metrics import RequestMetrics
from rillet.broker.security.session import Session
from rillet.wire.cluster_messages import BrokerHeartbeatRequest
from rillet.wire.messages import API_OF_REQUEST


class MeteredDispatcher(Dispatcher):
    def __init__(
        self,
        ctx: BrokerContext,
        metrics: RequestMetrics,
        listener: str,
        applied_by_broker: dict[int, int] | None = None,
    ) -> None:
        super().__init__(ctx)
        self._metrics = metrics
        self._listener = listener
        self._api_names: dict[type, str] = {}
        # The metadata index each broker last reported in an authenticated heartbeat (the
        # controller receives them): the console shows how far behind each broker is.
        self._applied_by_broker = applied_by_broker if applied_by_broker is not None else {}

    def dispatch_request(
        self, correlation_id: int, body: object, session: Session | None = None
    ) -> PendingReply | Unanswered:
        started_s = time.perf_counter()
        if isinstance(body, BrokerHeartbeatRequest) and self.proves_secret(
            body.cluster_id, body.auth
        ):
            self._applied_by_broker[body.broker_id] = body.applied_index
        reply = super().dispatch_request(correlation_id, body, session)
        kind = type(body)
        api = self._api_names.get(kind)
        if api is None:
            api = self._api_names[kind] = API_OF_REQUEST[kind].name.lower()
        if isinstance(reply, Unanswered):
            self._metrics.observe(self._listener, api, time.perf_counter() - started_s)
            return reply
        if reply.waiting is not None:
            reply.waiting = TimedReply(reply.waiting, self._finished, api, started_s)
            return reply
        if reply.error is not None:
            self._metrics.error(self._listener, api)
        self._metrics.observe(self._listener, api, time.perf_counter() - started_s)
        return reply

    def _finished(self, api: str, started_s: float, failed: bool) -> None:
        if failed:
            self._metrics.error(self._listener, api)
        self._metrics.observe(self._listener, api, time.perf_counter() - started_s)


class TimedReply(DrivingReply[object]):
    """Drives ``inner`` unchanged and calls ``on_done(api, started_s, failed)`` once when it
    finishes (no closure per request: the arguments ride along)."""

    __slots__ = ("_api", "_on_done", "_started_s")

    def __init__(
        self,
        inner: Deferred[object],
        on_done: Callable[[str, float, bool], None],
        api: str = "",
        started_s: float = 0.0,
    ) -> None:
        super().__init__(inner)
        self._on_done = on_done
        self._api = api
        self._started_s = started_s

    def _returned(self) -> None:
        self._on_done(self._api, self._started_s, False)

    def _raised(self) -> None:
        self._on_done(self._api, self._started_s, True)
