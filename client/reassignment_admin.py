"""Partition reassignment and leader election from the client (Kafka's
AlterPartitionReassignments, ListPartitionReassignments and ElectLeaders), and how far each
moving replica has copied (DescribeLogDirs on the broker receiving it).

Changes go to the controller (see :mod:`controller_changes`); each partition is answered on
its own, so a refused partition does not hold the others back: the answers are returned,
not raised. Listing is answered by any node.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rillet.client.cluster import ClusterClient
from rillet.client.controller_changes import ToController, decided
from rillet.client.errors import BrokerError, error_for
from rillet.wire.broker_admin_messages import (
    AlterBrokerConfigsRequest,
    AlterBrokerConfigsResponse,
    BrokerConfigChange,
    UnregisterBrokerRequest,
)
from rillet.wire.error_codes import ErrorCode
from rillet.wire.log_dir_messages import (
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
    LogDirTopic,
)
from rillet.wire.reassignment_messages import (
    AlterReassignmentsRequest,
    AlterReassignmentsResponse,
    ElectLeadersRequest,
    ElectLeadersResponse,
    ListReassignmentsRequest,
    ListReassignmentsResponse,
    PartitionMove,
    PartitionOutcome,
    ReassignmentStatus,
    TopicPartitions,
)


def _by_topic(partitions: Sequence[tuple[str, int]] | None) -> list[TopicPartitions] | None:
    if partitions is None:
        return None
    grouped: dict[str, list[int]] = {}
    for topic, partition in partitions:
        grouped.setdefault(topic, []).append(partition)
    return [TopicPartitions(t, ps) for t, ps in grouped.items()]


def _request_error(code: int, message: str | None) -> BrokerError | None:
    return None if code == ErrorCode.NONE else error_for(code, message)


@dataclass(frozen=True, slots=True)
class Reassignments:
    """Reassignment calls of one admin client (``Admin.reassignments()``)."""

    cluster: ClusterClient
    to_controller: ToController
    timeout_s: float
    backoff_s: float

    async def alter(self, moves: Sequence[PartitionMove]) -> list[PartitionOutcome]:
        """Start (replicas given) or cancel (None) moves; one outcome per partition."""
        response: AlterReassignmentsResponse = await decided(
            self.cluster,
            self.to_controller,
            AlterReassignmentsRequest(list(moves)),
            lambda r: _request_error(r.error_code, r.error_message),
            "partition reassignment",
            self.timeout_s,
            self.backoff_s,
        )
        return list(response.results)

    async def ongoing(
        self, partitions: Sequence[tuple[str, int]] | None = None
    ) -> list[ReassignmentStatus]:
        """Moves in progress (of ``partitions``, or all)."""
        response: ListReassignmentsResponse = await self.to_controller(
            ListReassignmentsRequest(_by_topic(partitions))
        )
        if response.error_code != ErrorCode.NONE:
            raise error_for(response.error_code, None)
        return list(response.reassignments)

    async def elect_leaders(
        self, election_type: int, partitions: Sequence[tuple[str, int]] | None
    ) -> list[PartitionOutcome]:
        """ElectLeaders (0 preferred, 1 unclean); one outcome per partition."""
        response: ElectLeadersResponse = await decided(
            self.cluster,
            self.to_controller,
            ElectLeadersRequest(election_type, _by_topic(partitions)),
            lambda r: _request_error(r.error_code, r.error_message),
            "leader election",
            self.timeout_s,
            self.backoff_s,
        )
        return list(response.results)

    async def alter_broker_configs(self, changes: Sequence[BrokerConfigChange]) -> None:
        """Set or remove brokers' dynamic settings (the replication throttle rates; broker
        id -1 is the cluster-wide default); raises on the first refused broker."""
        response: AlterBrokerConfigsResponse = await decided(
            self.cluster,
            self.to_controller,
            AlterBrokerConfigsRequest(list(changes)),
            lambda r: next(
                (
                    error_for(x.error_code, x.error_message)
                    for x in r.results
                    if x.error_code != ErrorCode.NONE
                ),
                None,
            ),
            "broker config change",
            self.timeout_s,
            self.backoff_s,
        )
        del response

    async def unregister_broker(self, broker_id: int) -> None:
        """UnregisterBroker: refused (raised) while the broker still holds a replica."""
        await decided(
            self.cluster,
            self.to_controller,
            UnregisterBrokerRequest(broker_id),
            lambda r: _request_error(r.error_code, r.error_message),
            "broker unregistration",
            self.timeout_s,
            self.backoff_s,
        )

    async def hosted_bytes(self, broker_id: int) -> dict[tuple[str, int], int] | None:
        """Bytes of every replica ``broker_id`` hosts (None: it does not answer)."""
        if broker_id not in self.cluster.metadata.brokers:
            await self.cluster.refresh_metadata([])
        try:
            conn = await self.cluster.connection(broker_id)
            response: DescribeLogDirsResponse = await conn.request(
                DescribeLogDirsRequest(None), self.cluster.request_timeout_s
            )
        except Exception:
            return None
        return {(p.topic, p.partition): p.size_bytes for p in response.partitions}

    async def replica_bytes(self, broker_id: int, topic: str, partition: int) -> int | None:
        """Bytes of ``topic``-``partition`` on ``broker_id`` (None: not there, or the broker
        does not answer): a moving replica's progress."""
        if broker_id not in self.cluster.metadata.brokers:
            await self.cluster.refresh_metadata([])
        try:
            conn = await self.cluster.connection(broker_id)
            response: DescribeLogDirsResponse = await conn.request(
                DescribeLogDirsRequest([LogDirTopic(topic, [partition])]),
                self.cluster.request_timeout_s,
            )
        except Exception:
            return None
        for p in response.partitions:
            if p.topic == topic and p.partition == partition:
                return p.size_bytes
        return None
