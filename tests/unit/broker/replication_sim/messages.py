"""The requests and answers that travel over the simulated network.

Why a module of its own: these are the wire of the simulation (follower fetches, produce,
and every call to the controller). Fetches carry the real request and answer of one
partition, calls to the controller the real cluster-api messages, produce only the fields
the scheduling code reads; being frozen, they can be delivered twice or late without anyone
mutating what another copy carries.
"""

from __future__ import annotations

from dataclasses import dataclass

from rillet.wire.cluster_messages import (
    AlterPartitionRequest,
    AlterPartitionResponse,
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
    MetadataFetchRequest,
    MetadataFetchResponse,
)
from rillet.wire.messages import FetchPartition, FetchPartitionResponse


@dataclass(frozen=True, slots=True)
class FetchReq:
    """A follower's fetch, one partition of the real request."""

    follower: int
    req_id: int
    partition: FetchPartition


@dataclass(frozen=True, slots=True)
class FetchResp:
    """The leader's answer, as the real code builds it (records as bytes)."""

    req_id: int
    answer: FetchPartitionResponse


@dataclass(frozen=True, slots=True)
class ProduceReq:
    payload: int
    count: int


@dataclass(frozen=True, slots=True)
class ProduceResp:
    payload: int
    error: int
    base_offset: int = -1
    count: int = 0


# The cluster apis a broker calls on a voter, as the real wire messages.
ClusterRequest = (
    BrokerRegistrationRequest
    | BrokerHeartbeatRequest
    | AlterPartitionRequest
    | MetadataFetchRequest
)
ClusterResponse = (
    BrokerRegistrationResponse
    | BrokerHeartbeatResponse
    | AlterPartitionResponse
    | MetadataFetchResponse
)


@dataclass(frozen=True, slots=True)
class ControllerReq:
    """A broker's request to a voter (register, heartbeat, AlterPartition, metadata fetch):
    the real wire request, and who sent it under which attempt id (a connection's
    correlation id)."""

    broker: int
    req_id: int
    request: ClusterRequest


@dataclass(frozen=True, slots=True)
class ControllerResp:
    """The voter's answer, as the real handler builds it."""

    req_id: int
    response: ClusterResponse
