"""Which requests need a node-authenticated connection, and for which node id.

Internal apis are served only on a connection that completed the node handshake
(:mod:`rillet.broker.cluster.node_handshake`), and a request that names a broker (registration,
heartbeat, ISR change, producer-id block, follower fetch) only for the node the connection
proved to be: a broker can register, heartbeat and fetch as itself, never as another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rillet.wire.cluster_messages import (
    AllocateProducerIdsRequest,
    AlterPartitionRequest,
    BrokerHeartbeatRequest,
    BrokerRegistrationRequest,
    MetadataFetchRequest,
)
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import FetchPartitionResponse, FetchRequest, FetchResponse
from rillet.wire.protocol import response_type_for
from rillet.wire.raft_voter_messages import ObserveRaftRequest
from rillet.wire.transaction_messages import TxnMarkersWrittenRequest

_BY_BROKER_ID = (
    BrokerRegistrationRequest,
    BrokerHeartbeatRequest,
    AlterPartitionRequest,
    AllocateProducerIdsRequest,
    TxnMarkersWrittenRequest,
    ObserveRaftRequest,
)


@dataclass(frozen=True, slots=True)
class GateRefusal:
    error: ErrorCode
    reason: str


def acting_node(request: Any) -> int | None:
    """The node id an internal request acts as; -1 for one that names no node (metadata
    fetch); None for a request any client may send."""
    if isinstance(request, _BY_BROKER_ID):
        return int(request.broker_id)
    if isinstance(request, MetadataFetchRequest):
        return -1
    if isinstance(request, FetchRequest) and request.replica_id >= 0:
        return int(request.replica_id)
    return None


def check_internal(request: Any, authenticated_node: int | None) -> GateRefusal | None:
    """None when ``request`` may be served on a connection authenticated as
    ``authenticated_node`` (None: not authenticated); otherwise why not."""
    acting = acting_node(request)
    if acting is None:
        return None
    name = type(request).__name__
    if authenticated_node is None:
        return GateRefusal(
            ErrorCode.AUTHENTICATION_FAILED,
            f"{name} needs a connection authenticated as a node (node handshake)",
        )
    if acting >= 0 and acting != authenticated_node:
        return GateRefusal(
            ErrorCode.AUTHORIZATION_FAILED,
            f"{name} as node {acting} on a connection authenticated as node {authenticated_node}",
        )
    return None


def refusal_response(request: Any, refusal: GateRefusal) -> Any:
    """The refused request's own response type carrying the error, so callers see it where
    they look for errors (the partitions' codes for a follower fetch)."""
    if isinstance(request, FetchRequest):
        return FetchResponse(
            [
                FetchPartitionResponse(p.topic, p.partition, refusal.error, -1, -1, b"")
                for p in request.partitions
            ]
        )
    return response_type_for(request)(refusal.error, error_message=refusal.reason)
