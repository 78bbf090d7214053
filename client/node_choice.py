"""Which nodes a request for "any node" may go to, in what order, how fast the client moves
on from one that does not answer, and which requests may be sent to two nodes at once.

Why: a bootstrap list or a metadata answer may name a node that is paused or wedged; it
still accepts TCP connections (the kernel's backlog) but answers nothing. The cluster client
races its candidates (``race_runner.race``) instead of waiting out a timeout on each in
turn. Opening a connection may always be raced: a connection that loses is closed before
anything was sent on it. A request may be sent to a second node only when a second copy is
harmless (it reads, or it asks for something the node gives out the same again): creating,
deleting or changing anything, or allocating a producer id, is sent once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from rillet.wire import acl_messages as am
from rillet.wire import classic_group_messages as cgm
from rillet.wire import group_messages as gm
from rillet.wire import user_messages as um
from rillet.wire.cluster_messages import DescribeQuorumRequest
from rillet.wire.messages import ApiVersionsRequest, MetadataRequest

# Kafka's socket.connection.setup.timeout.ms: TCP, TLS, login and a first answer.
DEFAULT_CONNECTION_SETUP_TIMEOUT_MS = 10_000
# RFC 8305's "Connection Attempt Delay" (250 ms recommended): a healthy node completes the
# whole set-up well within it, even with TLS and a SCRAM login on a busy machine.
DEFAULT_CONNECTION_ATTEMPT_DELAY_MS = 250
# A control request answered by no node within this long is sent to the next one too. A
# metadata answer takes milliseconds; the client waits longer when recent answers were slow
# (``hedge_delay_s``), so a large, busy cluster is not asked every question twice.
DEFAULT_REQUEST_HEDGE_DELAY_MS = 500
HEDGE_DELAY_RTTS = 4

# Requests that only read, or whose repetition is harmless (a second Metadata request that
# may create a topic finds it created).
REPEATABLE_REQUESTS: tuple[type, ...] = (
    MetadataRequest,
    ApiVersionsRequest,
    gm.FindCoordinatorRequest,
    gm.ListGroupsRequest,
    gm.DescribeGroupsRequest,
    cgm.ClassicListGroupsRequest,
    cgm.ClassicDescribeGroupsRequest,
    am.DescribeAclsRequest,
    um.DescribeUserScramCredentialsRequest,
    DescribeQuorumRequest,
)

# A candidate: (connection key, host, port).
Candidate = tuple[object, str, int]


def is_repeatable(request: object) -> bool:
    """Whether ``request`` may be sent to a second node while the first has not answered."""
    return isinstance(request, REPEATABLE_REQUESTS)


@dataclass(frozen=True, slots=True)
class NodeChoiceDelays:
    """The client's connection and hedging delays, checked when the client is made."""

    connection_setup_timeout_s: float
    connection_attempt_delay_s: float
    request_hedge_delay_s: float

    @classmethod
    def from_ms(
        cls,
        socket_connection_setup_timeout_ms: int,
        connection_attempt_delay_ms: int,
        request_hedge_delay_ms: int,
    ) -> NodeChoiceDelays:
        """Raises ValueError naming the setting when one is out of range."""
        if socket_connection_setup_timeout_ms <= 0:
            raise ValueError("socket_connection_setup_timeout_ms must be positive")
        for name, value in (
            ("connection_attempt_delay_ms", connection_attempt_delay_ms),
            ("request_hedge_delay_ms", request_hedge_delay_ms),
        ):
            if not 0 < value <= socket_connection_setup_timeout_ms:
                raise ValueError(f"{name} must be > 0 and <= socket_connection_setup_timeout_ms")
        return cls(
            socket_connection_setup_timeout_ms / 1000,
            connection_attempt_delay_ms / 1000,
            request_hedge_delay_ms / 1000,
        )

    def hedge_delay_s(self, recent_rtt_s: float) -> float:
        """How long a repeatable request waits for its node before the next is asked too."""
        return max(self.request_hedge_delay_s, HEDGE_DELAY_RTTS * recent_rtt_s)


def control_candidates(
    open_connections: Iterable[Candidate],
    brokers: Mapping[int, tuple[str, int]],
    bootstrap: Iterable[tuple[str, int]],
    excluded: Callable[[object, tuple[str, int]], bool],
) -> list[Candidate]:
    """The nodes a control request may go to, best first: the open control connections
    (nothing to wait for), the nodes of the metadata, the bootstrap addresses; one candidate
    per address (a node appears in all three); none for which ``excluded(key, address)``."""
    ordered: list[Candidate] = [c for c in open_connections if is_control_key(c[0])]
    ordered += [(("control", node_id), host, port) for node_id, (host, port) in brokers.items()]
    ordered += [(("bootstrap", host, port), host, port) for host, port in bootstrap]
    seen: set[tuple[str, int]] = set()
    out: list[Candidate] = []
    for key, host, port in ordered:
        if (host, port) not in seen:
            seen.add((host, port))
            if not excluded(key, (host, port)):
                out.append((key, host, port))
    return out


def is_control_key(key: object) -> bool:
    """A connection for requests any node answers (see ``ClusterClient.any_connection``)."""
    return isinstance(key, tuple) and bool(key) and key[0] in ("control", "bootstrap")
