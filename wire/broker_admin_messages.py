"""Changing brokers themselves: dynamic broker configs and UnregisterBroker (Kafka's api 64).

Both change the metadata log, so a node that is not the controller forwards them once
(``forwarded``). The broker configs are Kafka's replication throttle rates
(``leader.replication.throttled.rate``, ``follower.replication.throttled.rate``); broker id
-1 stands for the cluster-wide default (Kafka's resource name "").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rillet.wire.forwarding import ForwardedFor
from rillet.wire.request import Request


@dataclass(frozen=True, slots=True)
class BrokerConfigChange:
    """New values for ``set`` keys, none again for ``delete`` keys; with ``replace`` the
    broker's settings become exactly ``set`` (Kafka's AlterConfigs)."""

    broker_id: int
    set: dict[str, str] = field(default_factory=dict)
    delete: list[str] = field(default_factory=list)
    replace: bool = False


@dataclass(frozen=True, slots=True)
class BrokerConfigResult:
    broker_id: int
    error_code: int
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class AlterBrokerConfigsRequest(Request["AlterBrokerConfigsResponse"]):
    changes: list[BrokerConfigChange]
    validate_only: bool = False
    forwarded: bool = False
    forwarded_for: ForwardedFor | None = None  # set by the node that forwards it


@dataclass(frozen=True, slots=True)
class AlterBrokerConfigsResponse:
    results: list[BrokerConfigResult]


@dataclass(frozen=True, slots=True)
class UnregisterBrokerRequest(Request["UnregisterBrokerResponse"]):
    """Remove a broker from the cluster for good (it must hold no replica any more)."""

    broker_id: int
    forwarded: bool = False
    forwarded_for: ForwardedFor | None = None


@dataclass(frozen=True, slots=True)
class UnregisterBrokerResponse:
    error_code: int
    error_message: str | None = None
