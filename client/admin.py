"""Admin operations: create, delete, list and describe topics.

Topic changes go to the controller when the metadata names one, to any node otherwise; a
node that says it is not (or no longer) the controller makes the client refresh its metadata
and resend the topics it failed, until the operation's timeout. Per-topic failures are raised
as their typed errors (TopicAlreadyExistsError, InvalidTopicError, ...).

Every resend of one operation carries the same request id, so a create or delete that was
carried out before its answer was lost (a controller dying mid-request) is answered with
success, not with TopicAlreadyExistsError about the client's own topic. The metadata offset
of each answer is remembered by the cluster client: the next Metadata request, to any node,
sees the change.
"""

from __future__ import annotations

import ssl
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import trio

from rillet.client import acl_admin, group_admin, record_deletion, user_admin
from rillet.client.cluster import ClusterClient
from rillet.client.controller_changes import decided
from rillet.client.errors import (
    BrokerError,
    ClientTimeoutError,
    ConnectionFailedError,
    RilletError,
    error_for,
)
from rillet.client.lifecycle import ClientLifecycle
from rillet.client.node_choice import (
    DEFAULT_CONNECTION_ATTEMPT_DELAY_MS,
    DEFAULT_CONNECTION_SETUP_TIMEOUT_MS,
    DEFAULT_REQUEST_HEDGE_DELAY_MS,
)
from rillet.client.reassignment_admin import Reassignments
from rillet.client.sasl import SaslLogin
from rillet.client.types import (
    ClusterDescription,
    NewTopic,
    NodeInfo,
    PartitionInfo,
    TopicDescription,
    TopicPartition,
)
from rillet.wire import group_messages as gm
from rillet.wire import messages as m
from rillet.wire.acls import AclBinding, AclFilter
from rillet.wire.error_codes import ErrorCode
from rillet.wire.feature_messages import UpdateFeaturesRequest, UpdateFeaturesResponse
from rillet.wire.request import Request

R = TypeVar("R")

MAX_BACKOFF_S = 1.0
# Per-topic answers worth resending: the node could not act (not the controller, no leader
# for the metadata log yet), or the change's fate is unknown (REQUEST_TIMED_OUT: the metadata
# commit met a leadership change). Resending is safe because the request id makes a change
# already carried out answer "done". Anything else, even UNKNOWN_TOPIC_OR_PARTITION, is final.
_RESEND = frozenset(
    {
        ErrorCode.NOT_CONTROLLER,
        ErrorCode.LEADER_NOT_AVAILABLE,
        ErrorCode.NETWORK_EXCEPTION,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.REQUEST_TIMED_OUT,
    }
)


class Admin(ClientLifecycle):
    """Async admin client; use as ``async with Admin(bootstrap) as admin``."""

    def __init__(
        self,
        bootstrap: str,
        *,
        request_timeout_ms: int = 30_000,
        retry_backoff_ms: int = 100,
        client_id: str | None = None,
        ssl_context: ssl.SSLContext | None = None,
        sasl: SaslLogin | None = None,
        socket_connection_setup_timeout_ms: int = DEFAULT_CONNECTION_SETUP_TIMEOUT_MS,
        connection_attempt_delay_ms: int = DEFAULT_CONNECTION_ATTEMPT_DELAY_MS,
        request_hedge_delay_ms: int = DEFAULT_REQUEST_HEDGE_DELAY_MS,
    ) -> None:
        super().__init__(
            ClusterClient(
                bootstrap,
                client_id=client_id,
                request_timeout_ms=request_timeout_ms,
                ssl_context=ssl_context,
                sasl=sasl,
                socket_connection_setup_timeout_ms=socket_connection_setup_timeout_ms,
                connection_attempt_delay_ms=connection_attempt_delay_ms,
                request_hedge_delay_ms=request_hedge_delay_ms,
            )
        )
        self._timeout_ms = request_timeout_ms
        self._backoff_s = retry_backoff_ms / 1000

    async def create_topics(
        self,
        new_topics: Sequence[NewTopic],
        timeout_ms: int | None = None,
        validate_only: bool = False,
    ) -> None:
        """Create topics; raises the first per-topic error (e.g. TopicAlreadyExistsError).

        Topics without an error are created even when another one fails.
        """
        self._check_open()
        by_name = {t.name: t for t in new_topics}
        timeout = self._timeout_ms if timeout_ms is None else timeout_ms
        request_id = str(uuid.uuid4())  # the same on every resend: a retry finds its topic

        def request(names: list[str]) -> m.CreateTopicsRequest:
            return m.CreateTopicsRequest(
                [
                    m.NewTopic(
                        n,
                        by_name[n].num_partitions,
                        by_name[n].replication_factor,
                        dict(by_name[n].configs),
                    )
                    for n in names
                ],
                timeout,
                validate_only,
                request_id=request_id,
            )

        await self._topic_operation(list(by_name), request, timeout)

    async def create_partitions(
        self,
        counts: Mapping[str, int],
        timeout_ms: int | None = None,
        validate_only: bool = False,
    ) -> None:
        """Grow each topic to the given number of partitions (only more, as in Kafka: a
        count a topic has already raises InvalidPartitionsError). Records keyed before the
        change may map to other partitions after it."""
        self._check_open()
        timeout = self._timeout_ms if timeout_ms is None else timeout_ms
        request_id = str(uuid.uuid4())
        await self._topic_operation(
            list(counts),
            lambda ns: m.CreatePartitionsRequest(
                [m.PartitionCount(n, counts[n]) for n in ns],
                timeout,
                validate_only,
                request_id=request_id,
            ),
            timeout,
        )

    async def alter_topic_configs(
        self,
        topic: str,
        set: Mapping[str, str] | None = None,
        delete: Sequence[str] = (),
        replace: bool = False,
        timeout_ms: int | None = None,
        validate_only: bool = False,
    ) -> None:
        """Change a topic's config overrides at run time: ``set`` keys to new values,
        ``delete`` keys back to the nodes' defaults; with ``replace`` the overrides become
        exactly ``set``. Raises InvalidConfigError naming a bad key or value."""
        self._check_open()
        timeout = self._timeout_ms if timeout_ms is None else timeout_ms
        change = m.TopicConfigChange(topic, dict(set or {}), list(delete), replace)
        request_id = str(uuid.uuid4())
        await self._topic_operation(
            [topic],
            lambda ns: m.AlterTopicConfigsRequest(
                [change], timeout, validate_only, request_id=request_id
            ),
            timeout,
        )

    async def delete_topics(self, names: Sequence[str], timeout_ms: int | None = None) -> None:
        """Delete topics; raises the first per-topic error (e.g. UnknownTopicOrPartitionError)."""
        self._check_open()
        timeout = self._timeout_ms if timeout_ms is None else timeout_ms
        request_id = str(uuid.uuid4())  # the same on every resend: a retry is a success
        await self._topic_operation(
            list(dict.fromkeys(names)),
            lambda ns: m.DeleteTopicsRequest(ns, timeout, request_id=request_id),
            timeout,
        )

    async def delete_records(
        self, before: Mapping[TopicPartition, int], timeout_ms: int | None = None
    ) -> dict[TopicPartition, int]:
        """Delete the records below ``before[tp]`` in each partition (-1: every committed
        record), as Kafka's deleteRecords; returns each partition's new low watermark (its
        first offset). Only committed records can be deleted: an offset above the high
        watermark raises OffsetOutOfRangeError."""
        self._check_open()
        timeout = self._timeout_ms if timeout_ms is None else timeout_ms
        return await record_deletion.delete_records(self._cluster, before, timeout, self._backoff_s)

    # -- users (SASL/SCRAM) ---------------------------------------------------------------

    async def set_user_password(
        self,
        name: str,
        password: str,
        mechanisms: Sequence[str] = ("SCRAM-SHA-256", "SCRAM-SHA-512"),
        iterations: int = user_admin.DEFAULT_ITERATIONS,
    ) -> None:
        """Create or change user ``name``'s SCRAM credentials (one per mechanism), from
        ``password``, which is salted here and never sent."""
        self._check_open()
        upserts = [user_admin.upsertion(name, password, m, iterations) for m in mechanisms]
        await user_admin.alter(
            self._cluster,
            self._to_controller,
            upserts,
            [],
            self._timeout_ms / 1000,
            self._backoff_s,
        )

    async def delete_user(self, name: str) -> None:
        """Remove every SCRAM credential of ``name`` (ResourceNotFoundError: it has none)."""
        self._check_open()
        mechanisms = (await self.describe_users([name]))[name]
        await user_admin.alter(
            self._cluster,
            self._to_controller,
            [],
            [(name, m) for m, _ in mechanisms],
            self._timeout_ms / 1000,
            self._backoff_s,
        )

    async def describe_users(
        self, names: Sequence[str] | None = None
    ) -> dict[str, list[tuple[str, int]]]:
        """Users with SCRAM credentials: name -> [(mechanism, iterations)]."""
        self._check_open()
        return await user_admin.describe(self._to_controller, names)

    async def create_acls(self, bindings: Sequence[AclBinding]) -> None:
        """Add ACLs (ignored where one already exists); SecurityDisabledError on a cluster
        without an authorizer."""
        self._check_open()
        await acl_admin.create(
            self._cluster, self._to_controller, bindings, self._timeout_ms / 1000, self._backoff_s
        )

    async def delete_acls(self, filters: Sequence[AclFilter]) -> list[AclBinding]:
        """Remove every ACL one of ``filters`` selects; returns those removed."""
        self._check_open()
        return await acl_admin.delete(
            self._cluster, self._to_controller, filters, self._timeout_ms / 1000, self._backoff_s
        )

    async def describe_acls(self, acl_filter: AclFilter | None = None) -> list[AclBinding]:
        """The ACLs ``acl_filter`` selects (all of them without one)."""
        self._check_open()
        return await acl_admin.describe(self._to_controller, acl_filter or AclFilter())

    def reassignments(self) -> Reassignments:
        """Partition moves and leader elections (see :mod:`reassignment_admin`)."""
        self._check_open()
        return Reassignments(
            self._cluster, self._to_controller, self._timeout_ms / 1000, self._backoff_s
        )

    async def features(self) -> UpdateFeaturesResponse:
        """The cluster's feature level, what the answering node supports and what each
        registered node does (as the controller knows it, when it answers)."""
        self._check_open()
        response: UpdateFeaturesResponse = await self._to_controller(UpdateFeaturesRequest())
        if response.error_code != ErrorCode.NONE:
            raise error_for(response.error_code, response.error_message)
        return response

    async def upgrade_features(
        self, level: int, validate_only: bool = False
    ) -> UpdateFeaturesResponse:
        """Raise the cluster's feature level to ``level`` (refused while a node does not
        support it); ``validate_only``: only check that it could be."""
        self._check_open()
        return await decided(
            self._cluster,
            self._to_controller,
            UpdateFeaturesRequest("", level, validate_only),
            lambda r: (
                None if r.error_code == ErrorCode.NONE else error_for(r.error_code, r.error_message)
            ),
            "feature level upgrade",
            self._timeout_ms / 1000,
            self._backoff_s,
        )

    async def _topic_operation(
        self, names: list[str], make_request: Callable[[list[str]], Any], timeout_ms: int
    ) -> None:
        """Send the request for ``names``, resending retriable per-topic failures."""
        failures: dict[str, BrokerError] = {}
        last: RilletError | None = None
        backoff = self._backoff_s
        pending = names
        with trio.move_on_after(timeout_ms / 1000 + self._cluster.request_timeout_s):
            while pending:
                retry: list[str] = []
                try:
                    response = await self._to_controller(make_request(pending))
                except (ConnectionFailedError, ClientTimeoutError) as exc:
                    last, retry = exc, pending
                except BrokerError as exc:
                    if exc.code not in _RESEND:
                        raise
                    last, retry = exc, pending
                else:
                    self._cluster.saw_metadata_offset(response.metadata_offset)
                    for r in response.topics:
                        if r.error_code == ErrorCode.NONE:
                            continue
                        err = error_for(r.error_code, r.error_message or f"topic {r.name!r}")
                        if err.code in _RESEND:
                            last = err
                            retry.append(r.name)
                        else:
                            failures[r.name] = err
                pending = retry
                if pending:
                    await trio.sleep(backoff)  # a backoff between attempts
                    backoff = min(backoff * 2, MAX_BACKOFF_S)
                    await self._refresh_quietly()
        for name in names:
            if name in failures:
                raise failures[name]
        if pending:
            raise ClientTimeoutError(f"topic operation on {pending} did not complete") from last

    async def _to_controller(self, request: Request[R]) -> R:
        cluster = self._cluster
        if not cluster.metadata.brokers:
            await cluster.refresh_metadata([])
        controller = cluster.metadata.controller_id
        if controller in cluster.metadata.brokers:
            conn = await cluster.connection(controller)
            return await conn.request(request, cluster.request_timeout_s)
        return await cluster.request_any(request)

    async def _refresh_quietly(self) -> None:
        try:
            await self._cluster.refresh_metadata([])
        except (ConnectionFailedError, ClientTimeoutError):
            pass  # the next attempt will tell

    async def list_topics(self) -> list[str]:
        """Names of all topics, sorted."""
        self._check_open()
        response = await self._cluster.refresh_metadata(None)
        return sorted(t.name for t in response.topics if t.error_code == ErrorCode.NONE)

    async def describe_topics(self, names: Sequence[str] | None = None) -> list[TopicDescription]:
        """Partitions (leader, replicas, ISR) and configs of each topic (all when None).

        Raises UnknownTopicOrPartitionError (or another typed error) for a named topic the
        cluster cannot describe.
        """
        self._check_open()
        response = await self._cluster.refresh_metadata(None if names is None else list(names))
        found = {t.name: t for t in response.topics}
        order = sorted(found) if names is None else list(names)
        out = []
        for name in order:
            t = found.get(name)
            if t is None:
                raise error_for(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {name!r}")
            if t.error_code != ErrorCode.NONE:
                raise error_for(t.error_code, f"topic {name!r}")
            partitions = [
                PartitionInfo(
                    p.partition, p.leader_id, p.leader_epoch, list(p.replicas), list(p.isr)
                )
                for p in sorted(t.partitions, key=lambda p: p.partition)
            ]
            out.append(TopicDescription(t.name, partitions, dict(t.configs)))
        return out

    async def describe_cluster(self) -> ClusterDescription:
        """Cluster id, controller and nodes."""
        self._check_open()
        response = await self._cluster.refresh_metadata([])
        nodes = [NodeInfo(b.node_id, b.host, b.port, b.rack) for b in response.brokers]
        return ClusterDescription(response.cluster_id, response.controller_id, sorted(nodes))

    # -- consumer groups ------------------------------------------------------------------

    async def list_groups(self) -> list[gm.GroupListing]:
        return await group_admin.list_groups(self._cluster)

    async def describe_group(self, group_id: str) -> gm.GroupDescription:
        return await group_admin.describe_group(self._cluster, group_id)

    async def group_offsets(self, group_id: str) -> dict[TopicPartition, int]:
        """The group's committed offsets (next offset to consume) per partition."""
        return await group_admin.group_offsets(self._cluster, group_id)

    async def set_group_offsets(self, group_id: str, offsets: dict[TopicPartition, int]) -> None:
        """Reset a group's offsets; refused while the group has members."""
        await group_admin.set_group_offsets(self._cluster, group_id, offsets)

    async def delete_group_offsets(
        self, group_id: str, partitions: Sequence[TopicPartition]
    ) -> dict[TopicPartition, BrokerError | None]:
        """Delete a group's committed offsets of ``partitions`` (Kafka's OffsetDelete): each
        partition's error, None when deleted; refused for topics the members read."""
        self._check_open()
        return await group_admin.delete_group_offsets(
            self._cluster, group_id, partitions, self._backoff_s
        )

    async def delete_groups(self, group_ids: Sequence[str]) -> dict[str, BrokerError | None]:
        """Delete groups without members, with their committed offsets: each group's error
        (GroupNotEmptyError, GroupIdNotFoundError, ...), None for a group deleted."""
        self._check_open()
        return await group_admin.delete_groups(self._cluster, group_ids, self._backoff_s)
