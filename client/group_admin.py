"""Consumer-group administration: list, describe and delete groups, read, reset and delete
their offsets.

Listing and describing read the committed metadata of any node; offset changes go to the
group coordinator (the controller) and are refused while the group has members, so a reset
never races a running consumer (it would overwrite the reset with its next commit).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

import trio

from rillet.client.cluster import ClusterClient
from rillet.client.errors import (
    BrokerError,
    ClientTimeoutError,
    ConnectionFailedError,
    error_for,
)
from rillet.client.types import TopicPartition
from rillet.wire import group_messages as gm
from rillet.wire.error_codes import ErrorCode
from rillet.wire.request import Request

R = TypeVar("R")


async def list_groups(cluster: ClusterClient) -> list[gm.GroupListing]:
    response: gm.ListGroupsResponse = await cluster.request_any(gm.ListGroupsRequest())
    return sorted(response.groups, key=lambda g: g.group_id)


async def describe_group(cluster: ClusterClient, group_id: str) -> gm.GroupDescription:
    response: gm.DescribeGroupsResponse = await cluster.request_any(
        gm.DescribeGroupsRequest([group_id])
    )
    description = response.groups[0]
    if description.error_code != ErrorCode.NONE:
        raise error_for(description.error_code, f"group {group_id!r}")
    return description


async def group_offsets(cluster: ClusterClient, group_id: str) -> dict[TopicPartition, int]:
    response: gm.OffsetFetchResponse = await _to_coordinator(
        cluster, group_id, gm.OffsetFetchRequest(group_id, None)
    )
    return {TopicPartition(o.topic, o.partition): o.offset for o in response.offsets}


async def set_group_offsets(
    cluster: ClusterClient, group_id: str, offsets: Mapping[TopicPartition, int]
) -> None:
    """Commit ``offsets`` for a group without members (raises UnknownMemberIdError while it
    has some)."""
    request = gm.OffsetCommitRequest(
        group_id,
        "",
        -1,
        [gm.OffsetCommitPartition(tp.topic, tp.partition, o) for tp, o in sorted(offsets.items())],
    )
    response: gm.OffsetCommitResponse = await _to_coordinator(cluster, group_id, request)
    if response.error_code != ErrorCode.NONE:
        raise error_for(
            response.error_code, response.error_message or f"offsets of group {group_id!r}"
        )
    for p in response.partitions:
        if p.error_code != ErrorCode.NONE:
            raise error_for(p.error_code, f"offset of {p.topic}-{p.partition}")


async def delete_groups(
    cluster: ClusterClient, group_ids: Sequence[str], backoff_s: float
) -> dict[str, BrokerError | None]:
    """Delete empty groups with their committed offsets: each group's error (None when it
    was deleted). A coordinator that moved is found again until the request timeout."""
    ids = list(dict.fromkeys(group_ids))
    outcome: dict[str, BrokerError | None] = {}
    pending = ids
    last: Exception | None = None
    with trio.move_on_after(cluster.request_timeout_s):
        while pending:
            response, failure = await _attempt(cluster, pending[0], gm.DeleteGroupsRequest(pending))
            if response is None:
                last = failure
            else:
                retry = []
                for r in response.results:
                    err = None if r.error_code == ErrorCode.NONE else error_for(r.error_code)
                    if err is not None and err.code.retriable:
                        last = err
                        retry.append(r.group_id)
                        continue
                    if err is not None:
                        err = error_for(r.error_code, r.error_message or f"group {r.group_id!r}")
                    outcome[r.group_id] = err
                pending = retry
            if pending:
                await trio.sleep(backoff_s)
    if pending:
        raise ClientTimeoutError(f"deleting groups {', '.join(pending)}: {last}")
    return {g: outcome.get(g) for g in ids}


async def delete_group_offsets(
    cluster: ClusterClient, group_id: str, partitions: Sequence[TopicPartition], backoff_s: float
) -> dict[TopicPartition, BrokerError | None]:
    """Delete a group's committed offsets of ``partitions``: each partition's error (None
    when deleted; GroupSubscribedToTopicError while members read its topic). A group-level
    refusal (GroupIdNotFoundError) is raised; a coordinator that moved is found again until
    the request timeout."""
    by_topic: dict[str, list[int]] = {}
    for tp in dict.fromkeys(partitions):
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    request = gm.DeleteGroupOffsetsRequest(
        group_id, [gm.GroupTopicPartitions(t, ps) for t, ps in by_topic.items()]
    )
    last: Exception | None = None
    with trio.move_on_after(cluster.request_timeout_s):
        while True:
            response, last = await _attempt(cluster, group_id, request)
            if response is not None:
                code = ErrorCode.from_wire(response.error_code)
                if code == ErrorCode.NONE:
                    return {
                        TopicPartition(p.topic, p.partition): None
                        if p.error_code == ErrorCode.NONE
                        else error_for(p.error_code, f"{p.topic}-{p.partition} of {group_id!r}")
                        for p in response.partitions
                    }
                err = error_for(code, response.error_message or f"group {group_id!r}")
                if not err.code.retriable:
                    raise err
                last = err
            await trio.sleep(backoff_s)
    raise ClientTimeoutError(f"deleting offsets of group {group_id!r}: {last}")


async def _attempt(
    cluster: ClusterClient, group_id: str, request: Request[R]
) -> tuple[R | None, Exception | None]:
    """One call to the group's coordinator: its answer, or a failure a retry may cure (a
    lost connection, a timeout, a retriable error; anything else is raised)."""
    try:
        return await _to_coordinator(cluster, group_id, request), None
    except (ConnectionFailedError, ClientTimeoutError) as exc:
        return None, exc
    except BrokerError as exc:
        if not exc.code.retriable:
            raise
        return None, exc


async def _to_coordinator(cluster: ClusterClient, group_id: str, request: Request[R]) -> R:
    found: gm.FindCoordinatorResponse = await cluster.request_any(
        gm.FindCoordinatorRequest(group_id)
    )
    if found.error_code != ErrorCode.NONE:
        raise error_for(found.error_code, found.error_message or "FindCoordinator")
    conn = await cluster.coordinator_connection(found.node_id, found.host, found.port)
    return await conn.request(request, cluster.request_timeout_s)
