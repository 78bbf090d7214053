"""The Kafka listener's connections: the shared connection driver (broker/network/connection.py)
with the Kafka front end (broker/kafka/listener_front_end.py), and the node's view its
translators need (where each live broker's Kafka listener is, the topic defaults).
"""

from __future__ import annotations

from collections.abc import Callable

from rillet.broker.config import NodeConfig
from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.fetch_sessions import FetchSessionCache
from rillet.broker.kafka.listener_front_end import KafkaFrontEnd
from rillet.broker.kafka.translation import KafkaEndpoint
from rillet.broker.network.request_budget import ReadPolicy
from rillet.broker.replica.topic_config import topic_config_defaults


class BrokerClusterView:
    """Live brokers' Kafka listeners, from the node's committed metadata."""

    def __init__(self, ctx: BrokerContext) -> None:
        self._ctx = ctx

    def kafka_endpoints(self) -> dict[int, KafkaEndpoint]:
        return {
            b.broker_id: KafkaEndpoint(b.broker_id, b.kafka_host, b.kafka_port, b.rack)
            for b in self._ctx.metadata.state.brokers.values()
            if not b.fenced and b.kafka_port >= 0
        }

    def topic_names(self) -> list[str]:
        return sorted(self._ctx.metadata.state.topic_ids)

    def node_config(self) -> NodeConfig:
        return self._ctx.config

    def fetch_sessions(self) -> FetchSessionCache:
        return self._ctx.kafka_fetch_sessions

    def now_ms(self) -> int:
        return self._ctx.now_ms()

    def feature_level(self) -> int:
        return self._ctx.metadata.state.feature_level

    def topic_config_defaults(self) -> dict[str, str]:
        cfg = self._ctx.config
        return topic_config_defaults(cfg.log, cfg.replication.default_min_insync_replicas)


def kafka_front_end(
    ctx: BrokerContext, max_frame_bytes: int, policy: ReadPolicy | None = None
) -> Callable[[str], KafkaFrontEnd]:
    """What a Kafka listener's connection (broker/network/connection.py) reads and writes with:
    ``Connection(..., front_end=kafka_front_end(ctx, max_frame_bytes, policy))``."""
    offload_bytes = (policy or ReadPolicy.unlimited()).offload.threshold_bytes
    view = BrokerClusterView(ctx)
    return lambda peer_host: KafkaFrontEnd(max_frame_bytes, view, peer_host, offload_bytes)
