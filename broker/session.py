"""Who is on the other end of one connection, as the request path sees it.

A connection (native or Kafka listener) owns one :class:`Session` and passes it with every
request to :meth:`Dispatcher.dispatch`. It carries what authentication established (the
principal, in Kafka's ``User:name`` form, and the host it connected from) so authorization
and per-principal limits decide on the session, not on the socket. Protocol front ends set
the principal once a TLS client certificate or a SASL exchange proves it; until then it is
``User:ANONYMOUS``, as in Kafka.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ANONYMOUS = "User:ANONYMOUS"


@dataclass(slots=True)
class Session:
    """``listener``: ``"native"`` or ``"kafka"``; ``host``: the peer's address (no port);
    ``principal``: ``User:<name>`` once authenticated, else ``User:ANONYMOUS``;
    ``node_id``: the cluster node this connection proved to be (node handshake), if any."""

    listener: str
    host: str
    principal: str = ANONYMOUS
    node_id: int | None = None

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
