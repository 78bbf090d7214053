"""ListOffsets lookups: earliest, latest (the high watermark) or by timestamp.

Queries are grouped by partition leader, one request per node, sent concurrently. A
retriable failure (stale leader, connection lost, a node still loading, a request abandoned
because the metadata named a new leader while it waited) is retried after a metadata refresh
with backoff until the deadline; anything else is raised as its typed error.
"""

from __future__ import annotations

import logging
from collections import defaultdict

import trio

from rillet.client.cluster import ClusterClient
from rillet.client.errors import (
    BrokerError,
    ClientTimeoutError,
    ConnectionFailedError,
    LeaderNotAvailableError,
    RilletError,
    error_for,
)
from rillet.client.leader_watch import LeaderMovedError
from rillet.client.types import TopicPartition
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsResponse

log = logging.getLogger(__name__)

OffsetQuery = dict[TopicPartition, int]
OffsetAnswer = dict[TopicPartition, tuple[int, int]]  # tp -> (offset, timestamp_ms)


class _Round:
    """One round of requests: the answers, what must be retried, and why."""

    def __init__(self, answers: OffsetAnswer) -> None:
        self.answers = answers
        self.retry: OffsetQuery = {}
        self.last_error: RilletError | None = None
        self.fatal: RilletError | None = None  # a non-retriable failure ends the lookup


async def list_offsets(
    cluster: ClusterClient,
    query: OffsetQuery,
    timeout_s: float,
    backoff_s: float = 0.1,
    max_backoff_s: float = 1.0,
) -> OffsetAnswer:
    """Answer ``query`` ({tp: timestamp, -2 earliest, -1 latest}) as {tp: (offset, ts)}.

    Raises the typed error of a non-retriable failure at once, and ClientTimeoutError
    (chained to the last retriable error) after ``timeout_s``.
    """
    remaining = {TopicPartition(*tp): ts for tp, ts in query.items()}
    answers: OffsetAnswer = {}
    last: RilletError | None = None
    with trio.move_on_after(timeout_s):
        unknown = {tp.topic for tp in remaining if cluster.leader_for(tp) is None}
        if unknown:
            try:
                await cluster.refresh_metadata(unknown)
            except (ConnectionFailedError, ClientTimeoutError) as exc:
                last = exc
        while True:
            rnd = _Round(answers)
            by_leader: dict[int, OffsetQuery] = defaultdict(dict)
            for tp, ts in remaining.items():
                leader = cluster.leader_for(tp)
                if leader is None:
                    rnd.retry[tp] = ts
                    code = cluster.metadata.topic_errors.get(tp.topic)
                    where = f"{tp.topic}-{tp.partition}"
                    rnd.last_error = (
                        error_for(code, f"no leader for {where}")
                        if code is not None
                        else LeaderNotAvailableError(f"no leader known for {where}")
                    )
                else:
                    by_leader[leader][tp] = ts
            async with trio.open_nursery() as nursery:
                for leader, part in by_leader.items():
                    nursery.start_soon(_ask, cluster, leader, part, rnd, timeout_s)
            if rnd.fatal is not None:
                raise rnd.fatal
            if not rnd.retry:
                return answers
            remaining = rnd.retry
            last = rnd.last_error or last
            log.debug("retrying ListOffsets for %d partition(s): %s", len(remaining), last)
            await trio.sleep(backoff_s)  # a backoff between attempts
            backoff_s = min(backoff_s * 2, max_backoff_s)
            try:
                await cluster.refresh_metadata({tp.topic for tp in remaining})
            except (ConnectionFailedError, ClientTimeoutError) as exc:
                last = exc
    raise ClientTimeoutError(
        f"offset lookup did not complete in {timeout_s:.3g}s (last error: {last})"
    ) from last


async def _ask(
    cluster: ClusterClient, leader: int, query: OffsetQuery, rnd: _Round, timeout_s: float
) -> None:
    request = ListOffsetsRequest(
        [ListOffsetsPartition(tp.topic, tp.partition, ts) for tp, ts in query.items()]
    )
    try:
        conn = await cluster.connection(leader)
        # Abandoned once the metadata names another leader (a paused node answers nothing).
        response: ListOffsetsResponse = await cluster.leader_request(
            conn, leader, request, query.keys(), timeout_s
        )
    except (ConnectionFailedError, ClientTimeoutError, LeaderMovedError) as exc:
        rnd.retry.update(query)
        rnd.last_error = exc
        return
    except BrokerError as exc:
        if not exc.retriable:
            rnd.fatal = rnd.fatal or exc
            return
        rnd.retry.update(query)
        rnd.last_error = exc
        return
    except RilletError as exc:  # the client is closing, or a malformed answer
        rnd.fatal = rnd.fatal or exc
        return
    answered = set()
    for r in response.partitions:
        tp = TopicPartition(r.topic, r.partition)
        if tp not in query:
            continue
        answered.add(tp)
        if r.error_code == ErrorCode.NONE:
            rnd.answers[tp] = (r.offset, r.timestamp_ms)
            continue
        err = error_for(r.error_code, f"offset lookup for {tp.topic}-{tp.partition}")
        if not err.retriable:
            rnd.fatal = rnd.fatal or err
            continue
        if err.needs_metadata_refresh:
            cluster.metadata.mark_stale(tp)
        rnd.retry[tp] = query[tp]
        rnd.last_error = err
    for tp in query.keys() - answered:
        rnd.retry[tp] = query[tp]
