"""Admin operations: create, delete, list and describe topics."""

from __future__ import annotations

from rillet.client.cluster import ClusterClient
from rillet.client.errors import RilletError, error_for
from rillet.client.lifecycle import ClientLifecycle
from rillet.client.types import NewTopic, PartitionInfo, TopicDescription
from rillet.wire import messages as m
from rillet.wire.error_codes import ErrorCode


class Admin(ClientLifecycle):
    """Async admin client; use as ``async with Admin(bootstrap) as admin``."""

    def __init__(
        self, bootstrap: str, *, request_timeout_ms: int = 30_000, client_id: str | None = None
    ) -> None:
        super().__init__(ClusterClient(bootstrap, client_id, request_timeout_ms))
        self._timeout_ms = request_timeout_ms

    async def create_topics(self, topics: list[NewTopic], validate_only: bool = False) -> None:
        """Create topics; raises the first per-topic error (e.g. TopicAlreadyExistsError)."""
        request = m.CreateTopicsRequest(
            [
                m.NewTopic(t.name, t.num_partitions, t.replication_factor, dict(t.configs))
                for t in topics
            ],
            self._timeout_ms,
            validate_only,
        )
        response: m.CreateTopicsResponse = await self._cluster.request_any(request)
        _raise_first(response.topics)

    async def delete_topics(self, names: list[str]) -> None:
        response: m.DeleteTopicsResponse = await self._cluster.request_any(
            m.DeleteTopicsRequest(list(names), self._timeout_ms)
        )
        _raise_first(response.topics)

    async def list_topics(self) -> list[str]:
        response = await self._cluster.refresh_metadata(None)
        return sorted(t.name for t in response.topics if t.error_code == ErrorCode.NONE)

    async def describe_topics(self, names: list[str] | None = None) -> list[TopicDescription]:
        response = await self._cluster.refresh_metadata(names)
        out = []
        for t in response.topics:
            if t.error_code != ErrorCode.NONE:
                raise error_for(t.error_code, f"topic {t.name!r}")
            out.append(
                TopicDescription(
                    t.name,
                    [
                        PartitionInfo(
                            p.partition, p.leader_id, p.leader_epoch, list(p.replicas), list(p.isr)
                        )
                        for p in t.partitions
                    ],
                    dict(t.configs),
                )
            )
        return out

    async def describe_cluster(self) -> m.MetadataResponse:
        return await self._cluster.refresh_metadata([])


def _raise_first(results: list[m.TopicResult]) -> None:
    for r in results:
        if r.error_code != ErrorCode.NONE:
            raise error_for(r.error_code, r.error_message or f"topic {r.name!r}")
    if not isinstance(results, list):
        raise RilletError("malformed admin response")
