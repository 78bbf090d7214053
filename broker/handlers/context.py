"""What every handler may use: the node config, the replicas, the metadata and the clock."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from rillet.broker.cluster.metadata_answers import MetadataAnswers
from rillet.broker.cluster.metadata_view import MetadataView
from rillet.broker.config import NodeConfig
from rillet.broker.handlers.auto_topic_creation import AutoTopicCreations
from rillet.broker.handlers.fetch_sessions import DEFAULT_SESSION_SLOTS, FetchSessionCache
from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.broker.replica.producer_ids import ProducerIdSource
from rillet.broker.replica.replica_manager import ReplicaManager
from rillet.broker.replica.replication.throttled_replicas import ThrottledReplicas
from rillet.broker.runtime.injected_faults import NO_FAULTS, InjectedFaults
from rillet.broker.security.sasl.login_guard import LoginGuard
from rillet.wire.error_codes import ErrorCode


@dataclass(frozen=True, slots=True)
class BrokerContext:
    config: NodeConfig
    replicas: ReplicaManager
    advertised_port: int
    metadata: MetadataView
    producer_ids: ProducerIdSource | None = None
    faults: InjectedFaults = NO_FAULTS
    metadata_answers: MetadataAnswers = field(default_factory=MetadataAnswers)
    # Password checks, backoff and failure counts of both listeners' SASL logins.
    logins: LoginGuard = field(default_factory=LoginGuard)
    auto_topics: AutoTopicCreations = field(default_factory=AutoTopicCreations)
    # Kafka clients' fetch sessions (KIP-227), one cache for all of the node's connections.
    kafka_fetch_sessions: FetchSessionCache = field(
        default_factory=lambda: FetchSessionCache(DEFAULT_SESSION_SLOTS, random.Random())
    )
    # The leader's side of replication throttles (None: never throttles, as in unit tests).
    leader_throttle: ThrottledReplicas | None = None

    def now_ms(self) -> int:
        """The node's clock (the replica manager's: one clock for the whole middle layer)."""
        return self.replicas.clock.now_ms()

    def steady_ms(self) -> int:
        """The node's clock for timeouts and lags (never jumps: broker.clock)."""
        return self.replicas.clock.steady_ms()

    def leader_replica(self, topic: str, partition: int) -> PartitionReplica | ErrorCode:
        """The local replica when this node leads the partition, else the error to answer.

        NOT_LEADER_OR_FOLLOWER (clients refresh metadata and retry) when the partition exists
        but another node leads it, or this node has not opened it yet; UNKNOWN_TOPIC_OR_PARTITION
        when the committed metadata does not know it.
        """
        replica = self.replicas.get(topic, partition)
        if replica is not None and replica.is_leader and not replica.deleted:
            return replica
        if self.metadata.has_partition(topic, partition):
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
