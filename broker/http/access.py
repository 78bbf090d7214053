"""Who may read what on the HTTP endpoint: a pure decision per request, no I/O.

Two checks, both skipped for the probes (``/health`` and ``/ready`` say nothing an
orchestrator should have to log in for):

- The ``Host`` header must name this node (its configured host names, any IP literal,
  ``localhost``) or a name in ``http.allowed_hosts``. A web page cannot choose the Host its
  browser sends: a page on a hostile domain whose DNS answer is switched to this node's
  address (DNS rebinding) still sends that domain, and is refused, so it cannot read the
  console's data through the victim's browser. A request without Host (not a browser) passes.
- With a token configured, ``/api/*``, the console and any other path need it, as
  ``Authorization: Bearer <token>`` or as the password of HTTP Basic (what a browser asks
  for on a 401 and then sends with the console's own requests), or a verified client
  certificate naming a super user (mutual TLS). ``/metrics`` stays open, but without them
  its answer leaves out the series labelled with topic or group names, which ACLs may hide.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

PROBE_PATHS = frozenset({"/health", "/ready"})
METRICS_PATH = "/metrics"
MIN_TOKEN_CHARS = 16


@dataclass(frozen=True, slots=True)
class Refusal:
    status: int  # 421: not this node's name; 401: credentials needed
    reason: str  # one line, the response body


@dataclass(frozen=True, slots=True)
class Access:
    refusal: Refusal | None  # answer with this instead of the route
    detail: bool  # labelled /metrics series may be served


OPEN = Access(None, detail=True)


def host_name(header: str) -> str:
    """The name of a Host header value, without port, brackets or a final dot, lower-cased."""
    value = header.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value[1:]
    name, _, _port = value.partition(":")
    return name.rstrip(".")


def is_ip_literal(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class AccessPolicy:
    """Decides, per request, whether to answer and whether labelled series may be served."""

    def __init__(
        self,
        node_names: Iterable[str],
        allowed_hosts: str = "",
        token: str | None = None,
        super_users: frozenset[str] = frozenset(),
    ) -> None:
        patterns = [h.strip().lower().rstrip(".") for h in allowed_hosts.split(",")]
        self._names = {n.lower() for n in node_names if n} | {"localhost"}
        self._names |= {p for p in patterns if p and not p.startswith(".")}
        self._suffixes = tuple(p for p in patterns if p.startswith("."))
        self._any_host = "*" in self._names
        self._token = token.encode() if token else None
        self._super_users = super_users

    def host_allowed(self, header: str | None) -> bool:
        if header is None or self._any_host:
            return True
        name = host_name(header)
        return (
            name in self._names
            or is_ip_literal(name)
            or any(name.endswith(s) for s in self._suffixes)
        )

    def credentials_ok(self, authorization: str | None, principal: str | None) -> bool:
        if self._token is None or (principal is not None and principal in self._super_users):
            return True
        if authorization is None:
            return False
        scheme, _, value = authorization.strip().partition(" ")
        offered = value.strip().encode("latin-1")
        if scheme.lower() == "basic":
            try:
                decoded = base64.b64decode(offered, validate=True)
            except (binascii.Error, ValueError):
                return False
            offered = decoded.partition(b":")[2]  # any user name; the token is the password
        elif scheme.lower() != "bearer":
            return False
        return hmac.compare_digest(offered, self._token)

    def admit(
        self,
        path: str,
        host: str | None,
        authorization: str | None,
        principal: str | None = None,
    ) -> Access:
        """``host`` and ``authorization``: the request's headers (None when absent);
        ``principal``: the verified client certificate's (``User:CN=...``), if any."""
        if path in PROBE_PATHS:
            return OPEN
        if not self.host_allowed(host):
            name = host_name(host or "")
            return Access(Refusal(421, f"host {name!r} is not served here"), detail=False)
        allowed = self.credentials_ok(authorization, principal)
        if path == METRICS_PATH:
            return Access(None, detail=allowed)
        if not allowed:
            return Access(Refusal(401, "a bearer token is required"), detail=False)
        return OPEN
