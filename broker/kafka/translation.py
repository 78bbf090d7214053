"""What a translator returns, and what it may ask of the node (sans-I/O).

A Kafka request becomes either a :class:`Forward` (an internal request for the dispatcher,
with the functions that turn its answer, or a failure code, into Kafka's response) or an
:class:`Answer` given without the dispatcher. A response is a kio entity, or a
:class:`RawBody` when it was encoded by hand (Fetch, whose records leave with sendfile).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from rillet.broker.config import NodeConfig
from rillet.broker.handlers.fetch_sessions import FetchSessionCache
from rillet.wire.frame import BlobPart


@dataclass(frozen=True, slots=True)
class RawBody:
    """An already encoded response body (after the response header)."""

    parts: list[BlobPart]


@dataclass(frozen=True, slots=True)
class Forward:
    native: Any
    reply: Callable[[Any], Any]  # internal response -> Kafka response
    fail: Callable[[int], Any]  # rillet error code -> Kafka response
    # acks=0: Kafka sends no response, and closes the connection when a partition failed
    # (so the client refreshes its metadata): the handler says so (handlers/unanswered.py).
    unanswered: bool = False


@dataclass(frozen=True, slots=True)
class Answer:
    response: Any


@dataclass(frozen=True, slots=True)
class KafkaEndpoint:
    node_id: int
    host: str
    port: int
    rack: str | None


@dataclass(frozen=True, slots=True)
class Caller:
    """Who sent a request: the header's client id and the connection's peer host (what
    JoinGroup records for DescribeGroups)."""

    client_id: str | None
    client_host: str


class ClusterView(Protocol):
    """The node's view a translator needs: where each live broker's Kafka listener is, the
    value each topic setting has where a topic does not override it, the topics the node's
    metadata holds, the node's own settings (what DescribeConfigs tells of a broker), its
    Kafka clients' fetch sessions and its clock."""

    def kafka_endpoints(self) -> dict[int, KafkaEndpoint]: ...

    def topic_config_defaults(self) -> dict[str, str]: ...

    def topic_names(self) -> list[str]: ...
    def node_config(self) -> NodeConfig: ...

    def fetch_sessions(self) -> FetchSessionCache: ...

    def now_ms(self) -> int: ...

    def feature_level(self) -> int: ...


def millis(value: datetime.timedelta | int) -> int:
    """A kio duration field in whole milliseconds."""
    if isinstance(value, datetime.timedelta):
        return int(value / datetime.timedelta(milliseconds=1))
    return int(value)
