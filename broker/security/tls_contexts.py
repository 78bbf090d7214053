"""The node's TLS contexts, rebuilt when their certificate files change.

A context is built from the files at start (an unreadable file or a key that does not match
its certificate stops the node with one line). Afterwards, at most once a second, a new
connection first checks the files' modification times and sizes: when they changed, both
contexts are rebuilt, so a rotated certificate is used by every connection made from then
on, with no restart; connections already open keep the certificate they started with.
A rebuild that fails (a half-written file) is logged and the previous contexts stay.
"""

from __future__ import annotations

import logging
import os
import ssl
import time
from collections.abc import Callable

from rillet.broker.config.tls_config import TlsConfig
from rillet.broker.errors import ConfigError

log = logging.getLogger(__name__)

RECHECK_S = 1.0


class TlsSetupError(ConfigError):
    """A certificate, key or CA file cannot be used (the message names it)."""


class TlsContexts:
    """The server context (listeners), the client context (connections to other nodes) and
    the HTTP endpoint's: the same certificate, but a client certificate is only checked if
    offered (mutual TLS stands in for the endpoint's token), never required, as probes and
    browsers have none."""

    def __init__(self, config: TlsConfig, clock: Callable[[], float] = time.monotonic) -> None:
        self._config = config
        self._clock = clock
        self._files = [f for f in (config.certfile, config.keyfile, config.cafile) if f]
        self._stamp = self._file_stamp()
        self._server, self._client, self._http = self._build()
        self._checked_s = clock()

    def server(self) -> ssl.SSLContext:
        self._maybe_reload()
        return self._server

    def client(self) -> ssl.SSLContext:
        self._maybe_reload()
        return self._client

    def http_server(self) -> ssl.SSLContext:
        self._maybe_reload()
        return self._http

    def _maybe_reload(self) -> None:
        now = self._clock()
        if now - self._checked_s < RECHECK_S:
            return
        self._checked_s = now
        try:
            stamp = self._file_stamp()
        except TlsSetupError as exc:
            log.error("TLS files not reloaded: %s", exc)
            return
        if stamp == self._stamp:
            return
        try:
            self._server, self._client, self._http = self._build()
        except TlsSetupError as exc:
            log.error("TLS files changed but cannot be used (keeping the previous ones): %s", exc)
            return
        self._stamp = stamp
        log.info("TLS certificates reloaded from %s", ", ".join(self._files))

    def _file_stamp(self) -> tuple[tuple[int, int], ...]:
        try:
            return tuple((st.st_mtime_ns, st.st_size) for st in map(os.stat, self._files))
        except OSError as exc:
            raise TlsSetupError(f"cannot read {exc.filename}: {exc.strerror}") from None

    def _build(self) -> tuple[ssl.SSLContext, ssl.SSLContext, ssl.SSLContext]:
        c = self._config
        try:
            server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=c.cafile or None)
            server.load_cert_chain(c.certfile, c.keyfile)
            server.verify_mode = {
                "none": ssl.CERT_NONE,
                "requested": ssl.CERT_OPTIONAL,
                "required": ssl.CERT_REQUIRED,
            }[c.client_auth]
            client = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=c.cafile or None)
            client.load_cert_chain(c.certfile, c.keyfile)  # for peers that require it
            http = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=c.cafile or None)
            http.load_cert_chain(c.certfile, c.keyfile)
            http.verify_mode = ssl.CERT_OPTIONAL if c.cafile else ssl.CERT_NONE
        except (OSError, ssl.SSLError) as exc:
            files = f"tls.certfile={c.certfile}, tls.keyfile={c.keyfile}, tls.cafile={c.cafile}"
            raise TlsSetupError(f"cannot load TLS files ({files}): {exc}") from None
        return server, client, http
