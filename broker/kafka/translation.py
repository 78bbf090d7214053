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
from typing import Generic, Protocol, TypeAlias, TypeGuard, TypeVar

from kio.static.protocol import ResponsePayload

from rillet.broker.config import NodeConfig
from rillet.broker.handlers.fetch_sessions import FetchSessionCache
from rillet.wire.frame import BlobPart
from rillet.wire.protocol import response_type_for
from rillet.wire.request import Request

R = TypeVar("R")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RawBody:
    """An already encoded response body (after the response header)."""

    parts: list[BlobPart]


# A Kafka response: a kio entity of the request's version, or a body encoded by hand.
KafkaResponse: TypeAlias = ResponsePayload | RawBody


@dataclass(frozen=True, slots=True)
class Forward(Generic[R]):
    """``native`` for the dispatcher; ``reply`` turns its answer into Kafka's response."""

    native: Request[R]
    reply: Callable[[R], KafkaResponse]  # internal response -> Kafka response
    fail: Callable[[int], KafkaResponse]  # rillet error code -> Kafka response
    # acks=0: Kafka sends no response, and closes the connection when a partition failed
    # (so the client refreshes its metadata): the handler says so (handlers/unanswered.py).
    unanswered: bool = False

    def answer(self, message: object) -> KafkaResponse:
        """Kafka's response to the dispatcher's answer ``message`` (which must be the
        response type ``native`` pairs with: anything else is a dispatcher bug)."""
        if answers(message, self.native):
            return self.reply(message)
        raise TypeError(f"{type(message).__name__} does not answer {type(self.native)}")


class Forwarded(Protocol):
    """A :class:`Forward` of any response type, as the connection holds it."""

    @property
    def native(self) -> Request[object]: ...

    @property
    def fail(self) -> Callable[[int], KafkaResponse]: ...

    @property
    def unanswered(self) -> bool: ...

    def answer(self, message: object) -> KafkaResponse: ...


def answers(message: object, request: Request[R]) -> TypeGuard[R]:
    """Whether ``message`` is of the response type that ``request`` is answered with."""
    return isinstance(message, response_type_for(request))


@dataclass(frozen=True, slots=True)
class Answer:
    response: KafkaResponse


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


def field_or(entity: object, name: str, default: T) -> T:
    """Field ``name`` of a request entity, which only some of its api's versions have:
    ``default`` in the others (what Kafka assumes there). Raises TypeError when the field
    holds something else than ``default``'s type (its kio type is a subclass of it)."""
    value = getattr(entity, name, default)
    if not isinstance(value, type(default)):
        raise TypeError(f"{type(entity).__name__}.{name} is {value!r}, not {type(default)}")
    return value


def optional_field(entity: object, name: str, kind: type[T]) -> T | None:
    """Field ``name`` of a request entity where it may be null or absent (older versions):
    None then. Raises TypeError when it holds something else than a ``kind``."""
    value = getattr(entity, name, None)
    if value is None or isinstance(value, kind):
        return value
    raise TypeError(f"{type(entity).__name__}.{name} is {value!r}, not {kind.__name__}")


def millis(value: datetime.timedelta | int) -> int:
    """A kio duration field in whole milliseconds."""
    if isinstance(value, datetime.timedelta):
        return int(value / datetime.timedelta(milliseconds=1))
    return int(value)
