"""Who is on the other end of one connection, as the request path sees it.

A connection (native or Kafka listener) owns one :class:`Session`, passes it with every
request to :meth:`Dispatcher.dispatch`, and closes it when the connection ends: what the
request path registered with :meth:`Session.on_close` then runs (a broker whose heartbeat
connection closed, a follower whose fetch connection closed, group members that
heartbeated over it), so the connection itself knows nothing of what its loss means.

It carries what authentication established (the principal, in Kafka's ``User:name`` form,
and the host it connected from) so authorization and per-principal limits decide on the
session, not on the socket. Protocol front ends set the principal once a TLS client
certificate or a SASL exchange proves it; until then it is ``User:ANONYMOUS``, as in Kafka.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from rillet.broker.replica.produce_refusals import ProduceRefusals
from rillet.broker.replica.replication.fetch_session import LeaderFetchSession

log = logging.getLogger(__name__)

ANONYMOUS = "User:ANONYMOUS"
# What one connection's loss may set off: a broker, a follower and a few group members (a
# client runs a few). Bounded, like everything a peer can make the node remember.
MAX_CLOSE_ACTIONS = 66


@dataclass(slots=True)
class Session:
    """``listener``: ``"native"`` or ``"kafka"``; ``host``: the peer's address (no port);
    ``principal``: ``User:<name>`` once authenticated, else ``User:ANONYMOUS``;
    ``node_id``: the cluster node this connection proved to be (node handshake), if any."""

    listener: str
    host: str
    principal: str = ANONYMOUS
    node_id: int | None = None
    # A follower's incremental fetch session on this connection (replication.fetch_session).
    fetch_session: LeaderFetchSession | None = None
    # Idempotent batches refused on this connection (broker/replica/produce_refusals.py).
    produce_refusals: ProduceRefusals = field(default_factory=ProduceRefusals, repr=False)
    _on_close: dict[Hashable, tuple[object, Callable[[], None]]] = field(
        default_factory=dict, repr=False
    )

    def on_close(self, key: Hashable, action: Callable[[], None], tag: object = None) -> bool:
        """Run ``action`` when the connection closes; a later registration under ``key``
        replaces it (``tag`` tells what it was registered for). False when the session
        already holds :data:`MAX_CLOSE_ACTIONS` other actions (nothing is registered)."""
        if key not in self._on_close and len(self._on_close) >= MAX_CLOSE_ACTIONS:
            return False
        self._on_close[key] = (tag, action)
        return True

    def tag_of(self, key: Hashable) -> object:
        """The tag ``key``'s action was registered with (None if there is none)."""
        found = self._on_close.get(key)
        return found[0] if found is not None else None

    def forget(self, key: Hashable) -> None:
        self._on_close.pop(key, None)

    def close(self) -> None:
        """The connection ended: run every registered action once (each in turn, a failing
        one logged and skipped)."""
        actions, self._on_close = self._on_close, {}
        for key, (_, action) in actions.items():
            try:
                action()
            except Exception:
                log.exception("closing a connection: %r failed", key)

    @property
    def authenticated(self) -> bool:
        return self.principal != ANONYMOUS or self.node_id is not None


def peer_session(listener: str, host: str, peer_certificate: Any = None) -> Session:
    """The session of a new connection; a verified TLS client certificate names its
    principal as Kafka's default mapping does: ``User:`` and the subject's distinguished
    name, most specific part first (``User:CN=writer,O=Example``)."""
    session = Session(listener=listener, host=host)
    if peer_certificate:
        dn = certificate_subject(peer_certificate)
        if dn:
            session.principal = f"User:{dn}"
    return session


def certificate_subject(peer_certificate: dict[str, Any]) -> str:
    """RFC 2253 form of the subject of ``ssl.SSLSocket.getpeercert()``'s answer."""
    parts = []
    for rdn in reversed(peer_certificate.get("subject", ())):
        parts.append("+".join(f"{_SHORT.get(k, k)}={_escape(v)}" for k, v in rdn))
    return ",".join(parts)


_SHORT = {
    "commonName": "CN",
    "organizationName": "O",
    "organizationalUnitName": "OU",
    "countryName": "C",
    "stateOrProvinceName": "ST",
    "localityName": "L",
    "domainComponent": "DC",
}


def _escape(value: str) -> str:
    out = "".join("\\" + c if c in ',+"\\<>;' else c for c in value)
    if out.startswith(("#", " ")):
        out = "\\" + out
    return out[:-1] + "\\ " if out.endswith(" ") else out
