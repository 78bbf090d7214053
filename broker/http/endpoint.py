"""The node's HTTP endpoint: routes, its metrics registry and its background probes.

``/health`` answers 200 whenever the process serves HTTP; ``/ready`` 200 only when the broker
is registered, unfenced and caught up (else 503 and the reason); ``/metrics`` the Prometheus
text format from this node's own registry; ``/api/cluster`` the console's JSON; ``/`` the
console page.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import trio
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from rillet.broker.config import HttpConfig
from rillet.broker.http.cluster_json import cluster_document
from rillet.broker.http.collectors import NodeCollector, PartitionCollector
from rillet.broker.http.console_page import CONSOLE_HTML
from rillet.broker.http.errors import HttpBindError
from rillet.broker.http.node_probe import NodeProbe
from rillet.broker.http.request_metrics import RequestMetrics
from rillet.broker.http.request_parser import HttpRequest
from rillet.broker.http.server import HttpResponse, HttpServer, plain

log = logging.getLogger(__name__)


async def open_http_listeners(config: HttpConfig) -> list[trio.SocketListener]:
    """Bind the endpoint's port (none when disabled); a port in use is one clear line."""
    if not config.enabled:
        return []
    try:
        return await trio.open_tcp_listeners(config.port, host=config.host)
    except OSError as exc:
        raise HttpBindError(
            f"cannot listen for http on {config.host}:{config.port}: {exc.strerror or exc}"
        ) from None


class HttpEndpoint:
    def __init__(self, probe: NodeProbe) -> None:
        self.probe = probe
        self.registry = CollectorRegistry()
        self.requests = RequestMetrics(self.registry)
        self.registry.register(PartitionCollector(probe))
        self.registry.register(NodeCollector(probe))
        self.server = HttpServer(self.route)
        self.port: int | None = None

    def route(self, request: HttpRequest) -> HttpResponse:
        path = request.path
        if path == "/health":
            return plain(200, "ok")
        if path == "/ready":
            reason = self.probe.not_ready_reason()
            return plain(200, "ready") if reason is None else plain(503, reason)
        if path == "/metrics":
            return HttpResponse(200, generate_latest(self.registry), CONTENT_TYPE_LATEST)
        if path == "/api/cluster":
            body = json.dumps(cluster_document(self.probe), separators=(",", ":")).encode()
            return HttpResponse(200, body, "application/json")
        if path in ("/", "/index.html"):
            return HttpResponse(200, CONSOLE_HTML.encode(), "text/html; charset=utf-8")
        return plain(404, f"no such endpoint: {path}")

    async def run(
        self, listeners: list[trio.SocketListener], *, task_status: Any = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Report the bound port, then serve forever (cancel to stop)."""
        http = self.probe.config.http
        self.port = listeners[0].socket.getsockname()[1]
        log.info("node %d: http endpoint on %s:%d", self.probe.node_id, http.host, self.port)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._watch_elections)
            await nursery.start(trio.serve_listeners, self.server.handle, listeners)
            task_status.started(self.port)

    async def _watch_elections(self) -> None:
        quorum = self.probe.view.quorum
        if quorum is None:
            return
        known = quorum.leadership()
        self.probe.raft.observe_term(known.term)
        while True:
            known = await quorum.wait_for_leadership_change(known)
            self.probe.raft.observe_term(known.term)
