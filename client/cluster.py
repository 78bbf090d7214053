"""The client's view of the cluster: brokers, topic metadata, one connection per node."""

from __future__ import annotations

import logging
from typing import Any

import trio

from rillet.client.connection import BrokerConnection
from rillet.client.errors import ConnectionFailedError, RilletError, error_for
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import BrokerInfo, MetadataRequest, MetadataResponse, TopicMetadata

log = logging.getLogger(__name__)


def parse_bootstrap(bootstrap: str) -> list[tuple[str, int]]:
    """ "host:port[,host:port...]" -> [(host, port)]; raises ValueError with the culprit."""
    out = []
    for raw in bootstrap.split(","):
        item = raw.strip()
        if not item:
            continue
        host, sep, port = item.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ValueError(f"bootstrap address {item!r} is not host:port")
        out.append((host.strip("[]"), int(port)))
    if not out:
        raise ValueError("no bootstrap address given")
    return out


class ClusterClient:
    """Metadata cache and connection pool; ``start`` must be given a live nursery."""

    def __init__(self, bootstrap: str, client_id: str | None, request_timeout_ms: int) -> None:
        self._bootstrap = parse_bootstrap(bootstrap)
        self.client_id = client_id
        self.request_timeout_s = request_timeout_ms / 1000
        self.brokers: dict[int, BrokerInfo] = {}
        self.topics: dict[str, TopicMetadata] = {}
        self._connections: dict[int, BrokerConnection] = {}
        self._bootstrap_conn: BrokerConnection | None = None
        self._nursery: trio.Nursery | None = None
        self._refresh_lock = trio.Lock()
        self.metadata_version = 0

    def start(self, nursery: trio.Nursery) -> None:
        self._nursery = nursery

    async def close(self) -> None:
        for conn in list(self._connections.values()):
            await conn.aclose()
        if self._bootstrap_conn is not None:
            await self._bootstrap_conn.aclose()
        self._connections.clear()

    # -- connections ----------------------------------------------------------------------

    async def _open(self, host: str, port: int) -> BrokerConnection:
        assert self._nursery is not None, "ClusterClient.start() was not called"
        conn = BrokerConnection(host, port, self.client_id)
        await conn.connect(self._nursery, self.request_timeout_s)
        return conn

    async def connection(self, node_id: int) -> BrokerConnection:
        conn = self._connections.get(node_id)
        if conn is not None and not conn.closed:
            return conn
        info = self.brokers.get(node_id)
        if info is None:
            await self.refresh_metadata()
            info = self.brokers.get(node_id)
            if info is None:
                raise ConnectionFailedError(f"node {node_id} is not in the cluster metadata")
        conn = await self._open(info.host, info.port)
        self._connections[node_id] = conn
        return conn

    async def any_connection(self) -> BrokerConnection:
        for conn in self._connections.values():
            if not conn.closed:
                return conn
        for node_id in list(self.brokers):
            try:
                return await self.connection(node_id)
            except ConnectionFailedError:
                continue
        if self._bootstrap_conn is not None and not self._bootstrap_conn.closed:
            return self._bootstrap_conn
        errors = []
        for host, port in self._bootstrap:
            try:
                self._bootstrap_conn = await self._open(host, port)
                return self._bootstrap_conn
            except ConnectionFailedError as exc:
                errors.append(str(exc))
        raise ConnectionFailedError("; ".join(errors))

    async def request_any(self, request: Any) -> Any:
        conn = await self.any_connection()
        return await conn.request(request, self.request_timeout_s)

    # -- metadata -------------------------------------------------------------------------

    async def refresh_metadata(self, topics: list[str] | None = None) -> MetadataResponse:
        """Fetch metadata (all topics when None) and merge it into the cache."""
        async with self._refresh_lock:
            response: MetadataResponse = await self.request_any(MetadataRequest(topics))
            self.brokers = {b.node_id: b for b in response.brokers}
            for t in response.topics:
                if t.error_code == ErrorCode.NONE:
                    self.topics[t.name] = t
                else:
                    self.topics.pop(t.name, None)
            if topics is None:
                present = {t.name for t in response.topics}
                for name in list(self.topics):
                    if name not in present:
                        del self.topics[name]
            for node_id in list(self._connections):
                if node_id not in self.brokers:
                    await self._connections.pop(node_id).aclose()
            self.metadata_version += 1
            return response

    def partition_count(self, topic: str) -> int | None:
        t = self.topics.get(topic)
        return len(t.partitions) if t is not None else None

    def leader_for(self, topic: str, partition: int) -> int | None:
        t = self.topics.get(topic)
        if t is None or not 0 <= partition < len(t.partitions):
            return None
        leader = t.partitions[partition].leader_id
        return leader if leader >= 0 else None

    async def wait_for_topic(self, topic: str, timeout_s: float) -> int:
        """Partition count of ``topic``, refreshing metadata until it exists or time is up."""
        count = self.partition_count(topic)
        if count is not None:
            return count
        last: RilletError = error_for(
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"unknown topic {topic!r}"
        )
        with trio.move_on_after(timeout_s):
            backoff = 0.05
            while True:
                try:
                    await self.refresh_metadata([topic])
                except RilletError as exc:
                    last = exc
                count = self.partition_count(topic)
                if count is not None:
                    return count
                await trio.sleep(backoff)
                backoff = min(backoff * 2, 1.0)
        raise last
