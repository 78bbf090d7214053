"""Helpers for the Kafka front end's unit tests: a fixed cluster view, and requests encoded by
kafka-python (the independent oracle) taken through the listener's decoding path."""

from __future__ import annotations

import random
from typing import Any

from rillet.broker.config import NodeConfig
from rillet.broker.handlers.fetch_sessions import DEFAULT_SESSION_SLOTS, FetchSessionCache
from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.codec import KafkaRequestHeader, decode_body, decode_header, schema_for
from rillet.broker.kafka.framing import KafkaFrameDecoder
from rillet.broker.kafka.front_end import translate
from rillet.broker.kafka.translation import Caller, Forward, KafkaEndpoint

TOPIC_DEFAULTS = {"retention.ms": "604800000", "min.insync.replicas": "1"}


class StaticView:
    """A cluster view with fixed Kafka endpoints and topic defaults."""

    def __init__(
        self,
        endpoints: dict[int, KafkaEndpoint] | None = None,
        topics: list[str] | None = None,
        config: NodeConfig | None = None,
    ) -> None:
        self.endpoints = endpoints or {}
        self.topics = topics or []
        self.config = config or NodeConfig()
        self.sessions = FetchSessionCache(DEFAULT_SESSION_SLOTS, random.Random(7))
        self.clock_ms = 0
        self.rillet_level = 2  # the cluster's feature level (a new cluster's)

    def kafka_endpoints(self) -> dict[int, KafkaEndpoint]:
        return self.endpoints

    def topic_config_defaults(self) -> dict[str, str]:
        return dict(TOPIC_DEFAULTS)

    def topic_names(self) -> list[str]:
        return list(self.topics)

    def node_config(self) -> NodeConfig:
        return self.config

    def fetch_sessions(self) -> FetchSessionCache:
        return self.sessions

    def now_ms(self) -> int:
        return self.clock_ms

    def feature_level(self) -> int:
        return self.rillet_level


def received(
    request: Any, version: int, correlation_id: int = 7
) -> tuple[KafkaRequestHeader, ApiSchema, Any]:
    """(header, schema, entity) as the listener decodes kafka-python's framed request."""
    request.with_header(correlation_id=correlation_id, client_id="oracle")
    data = request.encode(version=version, header=True, framed=True)
    decoder = KafkaFrameDecoder(1 << 20)
    decoder.feed(bytes(data))
    frame = decoder.next_frame()
    assert frame is not None and decoder.next_frame() is None
    header, start = decode_header(frame)
    schema = schema_for(header)
    return header, schema, decode_body(frame, start, schema)


def forwarded(
    request: Any, version: int, view: StaticView | None = None, client_host: str = ""
) -> tuple[ApiSchema, Forward]:
    """The Forward the listener makes of kafka-python's request."""
    header, schema, entity = received(request, version)
    action = translate(schema, entity, view or StaticView(), Caller(header.client_id, client_host))
    assert isinstance(action, Forward)
    return schema, action
