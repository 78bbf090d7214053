"""The node's HTTP endpoint: routes, its metrics registry and its background probes.

``/health`` answers 200 whenever the process serves HTTP; ``/ready`` 200 only when the broker
is registered, unfenced and caught up (else 503 and the reason); ``/metrics`` the Prometheus
text format from this node's own registry; ``/api/cluster`` the console's JSON; ``/`` the
console page. Who may read which of them is decided per request by
:class:`~rillet.broker.http.access.AccessPolicy` (Host check, token, mutual TLS).
"""

from __future__ import annotations

import json
import logging
import socket
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import trio
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from rillet.broker.config import NodeConfig
from rillet.broker.config.http_config import HttpConfig
from rillet.broker.errors import ConfigError
from rillet.broker.http.access import MIN_TOKEN_CHARS, AccessPolicy
from rillet.broker.http.browser_view import browse_page
from rillet.broker.http.cluster_json import cluster_document
from rillet.broker.http.collectors import NodeCollector, PartitionCollector
from rillet.broker.http.console_page import CONSOLE_HTML
from rillet.broker.http.console_views import charts_page, configs_page, logdirs_page
from rillet.broker.http.errors import HttpBindError, HttpError
from rillet.broker.http.history import History
from rillet.broker.http.history_sampler import run_sampler
from rillet.broker.http.message_browser import decode_page, parse_query, read_page
from rillet.broker.http.node_level_metrics import node_level_registry
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


def read_token_file(path: str) -> str:
    """The endpoint's token, read at start: a missing or short file stops the node."""
    try:
        token = Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"http.auth_token_file {path}: cannot be read ({exc})") from None
    if len(token) < MIN_TOKEN_CHARS or any(c.isspace() for c in token):
        raise ConfigError(
            f"http.auth_token_file {path}: the token must be one word of at least "
            f"{MIN_TOKEN_CHARS} characters"
        )
    return token


def access_policy(config: NodeConfig) -> AccessPolicy:
    """The endpoint's policy from the node's settings (reads the token file)."""
    http = config.http
    names = (
        config.listener.host,
        config.advertised_host,
        config.kafka_listener.host,
        config.kafka_advertised_host,
        http.host,
        socket.gethostname(),
    )
    token = read_token_file(http.auth_token_file) if http.auth_token_file else None
    return AccessPolicy(names, http.allowed_hosts, token, config.authorizer.super_user_set)


def http_tls_on(config: NodeConfig) -> bool:
    """``http.tls``, or when unset whether the node's listeners use TLS."""
    return config.tls.enabled if config.http.tls is None else config.http.tls


def html(text: str) -> HttpResponse:
    return HttpResponse(200, text.encode(), "text/html; charset=utf-8")


CHALLENGE = (("WWW-Authenticate", 'Basic realm="rillet", charset="UTF-8"'),)


class HttpEndpoint:
    def __init__(
        self,
        probe: NodeProbe,
        access: AccessPolicy | None = None,
        tls: Callable[[], ssl.SSLContext] | None = None,
    ) -> None:
        """``access``: built from the node's settings when None; ``tls``: the HTTPS context
        (plain HTTP when None)."""
        self.probe = probe
        self.access = access if access is not None else access_policy(probe.config)
        self.registry = CollectorRegistry()
        self.requests = RequestMetrics(self.registry)
        self.registry.register(PartitionCollector(probe))
        self.registry.register(NodeCollector(probe))
        self.node_level = node_level_registry(self.registry)
        http = probe.config.http
        self.server = HttpServer(
            self.route,
            http.max_connections,
            max_connections_per_ip=http.max_connections_per_ip,
            request_head_timeout_ms=http.request_head_timeout_ms,
            tls=tls,
        )
        self.history = History(http.history_samples)
        self._decode_limiter = trio.CapacityLimiter(1)
        self.port: int | None = None

    def route(self, request: HttpRequest) -> HttpResponse | Awaitable[HttpResponse]:
        path = request.path
        access = self.access.admit(
            path, request.header("host"), request.header("authorization"), request.principal
        )
        if access.refusal is not None:
            refusal = access.refusal
            response = plain(refusal.status, refusal.reason)
            return replace(response, headers=CHALLENGE) if refusal.status == 401 else response
        if path == "/health":
            return plain(200, "ok")
        if path == "/ready":
            reason = self.probe.not_ready_reason()
            return plain(200, "ready") if reason is None else plain(503, reason)
        if path == "/metrics":
            registry = self.registry if access.detail else self.node_level
            return HttpResponse(200, generate_latest(registry), CONTENT_TYPE_LATEST)
        if path == "/api/cluster":
            body = json.dumps(cluster_document(self.probe), separators=(",", ":")).encode()
            return HttpResponse(200, body, "application/json")
        if path in ("/", "/index.html"):
            return html(CONSOLE_HTML)
        if path == "/console/browse":
            return self._browse(request.query)
        if path.startswith("/console/"):
            try:
                return html(self._view(path))
            except HttpError as exc:
                return plain(exc.status, exc.reason)
        return plain(404, f"no such endpoint: {path}")

    def _view(self, path: str) -> str:
        """A server-drawn console page (console_views.py, browser_view.py)."""
        http = self.probe.config.http
        if path == "/console/charts":
            return charts_page(self.history, self.probe.node_id, http.history_sample_interval_ms)
        if path == "/console/configs":
            return configs_page(self.probe)
        if path == "/console/logdirs":
            return logdirs_page(self.probe)
        raise HttpError(404, f"no such endpoint: {path}")

    async def _browse(self, query: str) -> HttpResponse:
        """The message browser: the page's bytes are read here, on the event loop (the log is
        not shared with threads); its records are decoded in a worker thread, one page at a
        time node-wide."""
        http = self.probe.config.http
        params = dict(parse_qsl(query))
        topics = sorted(t.name for t in self.probe.view.state.topics.values())
        if not params.get("topic"):
            return html(browse_page(None, topics, http.console_browse_max_records))
        try:
            asked = parse_query(params)
            replica = self.probe.replicas.get(asked.topic, asked.partition)
            raw = read_page(replica, asked, http.console_browse_max_bytes)
        except HttpError as exc:
            return plain(exc.status, exc.reason)
        page = await trio.to_thread.run_sync(
            decode_page, raw, http.console_browse_max_records, limiter=self._decode_limiter
        )
        return html(browse_page(page, topics, http.console_browse_max_records))

    async def run(
        self, listeners: list[trio.SocketListener], *, task_status: Any = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Report the bound port, then serve forever (cancel to stop)."""
        http = self.probe.config.http
        self.port = listeners[0].socket.getsockname()[1]
        scheme = "https" if self.server.tls else "http"
        log.info("node %d: %s endpoint on %s:%d", self.probe.node_id, scheme, http.host, self.port)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._watch_elections)
            nursery.start_soon(run_sampler, self.probe, self.history)
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
