"""ListOffsets lookups: earliest, latest (the high watermark, or for read_committed the last
stable offset) or by timestamp.

Asked of each partition's leader, with retries, by :mod:`leader_rounds`.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from rillet.client.cluster import ClusterClient
from rillet.client.leader_rounds import LeaderRequest, PartitionAnswer, ask_leaders
from rillet.client.types import TopicPartition
from rillet.wire.messages import (
    READ_COMMITTED,
    READ_UNCOMMITTED,
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsResponse,
)

OffsetQuery = dict[TopicPartition, int]
OffsetAnswer = dict[TopicPartition, tuple[int, int]]  # tp -> (offset, timestamp_ms)


def _build(query: OffsetQuery, isolation_level: int = READ_UNCOMMITTED) -> ListOffsetsRequest:
    return ListOffsetsRequest(
        [ListOffsetsPartition(tp.topic, tp.partition, ts) for tp, ts in query.items()],
        isolation_level,
    )


def _read(response: ListOffsetsResponse) -> Iterable[PartitionAnswer[tuple[int, int]]]:
    for r in response.partitions:
        tp = TopicPartition(r.topic, r.partition)
        yield PartitionAnswer(tp, r.error_code, (r.offset, r.timestamp_ms))


_LIST_OFFSETS: LeaderRequest[int, tuple[int, int]] = LeaderRequest("offset lookup", _build, _read)
# read_committed: "latest" is the last stable offset (a read_committed reader's end).
_LIST_COMMITTED_OFFSETS: LeaderRequest[int, tuple[int, int]] = LeaderRequest(
    "offset lookup", partial(_build, isolation_level=READ_COMMITTED), _read
)


async def list_offsets(
    cluster: ClusterClient,
    query: OffsetQuery,
    timeout_s: float,
    backoff_s: float = 0.1,
    max_backoff_s: float = 1.0,
    read_committed: bool = False,
) -> OffsetAnswer:
    """Answer ``query`` ({tp: timestamp, -2 earliest, -1 latest}) as {tp: (offset, ts)};
    with ``read_committed``, latest is the last stable offset.

    Raises the typed error of a non-retriable failure at once, and ClientTimeoutError
    (chained to the last retriable error) after ``timeout_s``.
    """
    kind = _LIST_COMMITTED_OFFSETS if read_committed else _LIST_OFFSETS
    return await ask_leaders(cluster, kind, query, timeout_s, backoff_s, max_backoff_s)
