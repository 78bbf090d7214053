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


def peer_session(listener: str, host: str) -> Session:
    return Session(listener=listener, host=host)
