"""What a connection's protocol and its listener's front end exchange with the driver.

The front end (one per listener) turns frames into :class:`Inbound` requests or
:class:`Immediate` answers and raises :class:`CloseConnection` for input it cannot serve;
the protocol (broker/network/connection_protocol.py) answers the driver with the actions below
(driver: broker/network/connection.py).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol

from rillet.broker.errors import BrokerError
from rillet.broker.network.outgoing import Encoder, Outgoing
from rillet.broker.security.sasl.exchange import SaslExchange
from rillet.wire.frame import BlobPart


class CloseConnection(BrokerError):
    """Input a front end cannot serve: the connection is closed, the reason logged."""

    def __init__(self, reason: str, level: int = logging.WARNING) -> None:
        super().__init__(reason)
        self.level = level


@dataclass(frozen=True, slots=True)
class Inbound:
    """A request a front end decoded: the typed internal request the handlers serve and
    how its answer goes back. ``produce_bytes``: charged to the produce quota;
    ``unanswered``: nothing is written back (Kafka's acks=0) and a failure closes the
    connection; ``offload_answer``: the answer is large, build it in a worker thread."""

    correlation_id: int
    body: object
    encoder: Encoder
    produce_bytes: int = 0
    unanswered: bool = False
    offload_answer: bool = False


@dataclass(frozen=True, slots=True)
class Immediate:
    """An answer the front end made itself (Kafka's ApiVersions, a malformed request's
    INVALID_REQUEST)."""

    correlation_id: int
    parts: list[BlobPart]


class FrontEnd(Protocol):
    """A listener's framing and headers. ``pre_authentication_apis``: what may be asked
    before logging in; ``certificate_logs_in``: a verified client certificate counts as a
    login (else only SASL does)."""

    listener: str
    pre_authentication_apis: frozenset[int]
    certificate_logs_in: bool

    @property
    def pending_bytes(self) -> int:
        """Bytes received that are not yet a whole frame."""
        ...

    def feed(self, data: bytes) -> None: ...

    def next_frame(self, max_frame_bytes: int, setting: str) -> bytes | None:
        """The next whole frame, None until more bytes arrive; raises CloseConnection for
        one over ``max_frame_bytes`` (named ``setting`` in the reason)."""
        ...

    def peek_api(self, frame: bytes) -> int | None:
        """The frame's api from its header alone; raises CloseConnection."""
        ...

    def decode(self, frame: bytes) -> Inbound | Immediate:
        """The request (may run in a worker thread); raises CloseConnection."""
        ...


@dataclass(frozen=True, slots=True)
class Frame:
    """A whole frame to decode; in a worker thread when ``offload`` (it is large)."""

    data: bytes
    offload: bool


@dataclass(frozen=True, slots=True)
class Close:
    reason: str
    level: int = logging.WARNING


@dataclass(frozen=True, slots=True)
class Send:
    """Hand ``out`` to the writer (after settling its in-order work, if any)."""

    out: Outgoing


@dataclass(frozen=True, slots=True)
class NodeAuthenticated:
    """Send ``out`` (the handshake's last answer): the peer proved to be a cluster node."""

    out: Outgoing


@dataclass(frozen=True, slots=True)
class Dispatch:
    """Run ``request`` through the dispatcher, then hand the result to ``dispatched``."""

    request: Inbound
    throttle_ms: int


@dataclass(frozen=True, slots=True)
class Login:
    """Check a SASL token (off the event loop, with backoff), then hand the step to
    ``logged_in`` before reading the next request."""

    request: Inbound
    exchange: SaslExchange
    token: bytes


Action = Send | NodeAuthenticated | Dispatch | Login | Close
