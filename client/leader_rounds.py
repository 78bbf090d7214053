"""Per-partition requests that only a partition's leader can answer, sent in rounds.

ListOffsets and DeleteRecords share this: the partitions are grouped by leader, one request
per node, sent concurrently. A retriable failure (stale leader, connection lost, a node
still loading, a request abandoned because the metadata named a new leader while it waited)
is retried after a metadata refresh with backoff until the deadline; anything else is
raised as its typed error.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import trio

from rillet.client.cluster import REFRESH_FAILURES, ClusterClient
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

log = logging.getLogger(__name__)

Q = TypeVar("Q")  # what is asked of one partition
A = TypeVar("A")  # what one partition answers


@dataclass(frozen=True, slots=True)
class PartitionAnswer(Generic[A]):
    tp: TopicPartition
    error_code: int
    value: A


@dataclass(frozen=True, slots=True)
class LeaderRequest(Generic[Q, A]):
    """How to ask a leader about some partitions and read its answer."""

    what: str  # for errors: "offset lookup", "record deletion"
    build: Callable[[dict[TopicPartition, Q]], Any]
    read: Callable[[Any], Iterable[PartitionAnswer[A]]]


class _Round(Generic[Q, A]):
    """One round of requests: the answers, what must be retried, and why."""

    def __init__(self, answers: dict[TopicPartition, A]) -> None:
        self.answers = answers
        self.retry: dict[TopicPartition, Q] = {}
        self.last_error: RilletError | None = None
        self.fatal: RilletError | None = None  # a non-retriable failure ends the operation


async def ask_leaders(
    cluster: ClusterClient,
    request: LeaderRequest[Q, A],
    query: Mapping[TopicPartition, Q],
    timeout_s: float,
    backoff_s: float = 0.1,
    max_backoff_s: float = 1.0,
) -> dict[TopicPartition, A]:
    """Each partition's answer. Raises the typed error of a non-retriable failure at once,
    and ClientTimeoutError (chained to the last retriable error) after ``timeout_s``."""
    remaining = {TopicPartition(*tp): q for tp, q in query.items()}
    answers: dict[TopicPartition, A] = {}
    last: RilletError | None = None
    with trio.move_on_after(timeout_s):
        unknown = {tp.topic for tp in remaining if cluster.leader_for(tp) is None}
        if unknown:
            try:
                await cluster.refresh_metadata(unknown)
            except REFRESH_FAILURES as exc:
                last = exc
        while True:
            rnd: _Round[Q, A] = _Round(answers)
            by_leader: dict[int, dict[TopicPartition, Q]] = defaultdict(dict)
            for tp, q in remaining.items():
                leader = cluster.leader_for(tp)
                if leader is None:
                    rnd.retry[tp] = q
                    code = cluster.metadata.topic_errors.get(tp.topic)
                    where = f"{tp.topic}-{tp.partition}"
                    rnd.last_error = (
                        error_for(code, f"no leader for {where}")
                        if code is not None
                        else LeaderNotAvailableError(f"no leader known for {where}")
                    )
                else:
                    by_leader[leader][tp] = q
            async with trio.open_nursery() as nursery:
                for leader, part in by_leader.items():
                    nursery.start_soon(_ask, cluster, request, leader, part, rnd, timeout_s)
            if rnd.fatal is not None:
                raise rnd.fatal
            if not rnd.retry:
                return answers
            remaining = rnd.retry
            last = rnd.last_error or last
            log.debug("retrying %s for %d partition(s): %s", request.what, len(remaining), last)
            await trio.sleep(backoff_s)  # a backoff between attempts
            backoff_s = min(backoff_s * 2, max_backoff_s)
            try:
                await cluster.refresh_metadata({tp.topic for tp in remaining})
            except REFRESH_FAILURES as exc:
                last = exc
    raise ClientTimeoutError(
        f"{request.what} did not complete in {timeout_s:.3g}s (last error: {last})"
    ) from last


async def _ask(
    cluster: ClusterClient,
    request: LeaderRequest[Q, A],
    leader: int,
    query: dict[TopicPartition, Q],
    rnd: _Round[Q, A],
    timeout_s: float,
) -> None:
    try:
        conn = await cluster.connection(leader)
        # Abandoned once the metadata names another leader (a paused node answers nothing).
        response = await cluster.leader_request(
            conn, leader, request.build(query), query.keys(), timeout_s
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
    for r in request.read(response):
        tp = r.tp
        if tp not in query:
            continue
        answered.add(tp)
        if r.error_code == ErrorCode.NONE:
            rnd.answers[tp] = r.value
            continue
        err = error_for(r.error_code, f"{request.what} for {tp.topic}-{tp.partition}")
        if not err.retriable:
            rnd.fatal = rnd.fatal or err
            continue
        if err.needs_metadata_refresh:
            cluster.metadata.mark_stale(tp)
        rnd.retry[tp] = query[tp]
        rnd.last_error = err
    for tp in query.keys() - answered:
        rnd.retry[tp] = query[tp]
