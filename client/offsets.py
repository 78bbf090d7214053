"""ListOffsets lookups: earliest, latest (the high watermark) or by timestamp.

Asked of each partition's leader, with retries, by :mod:`leader_rounds`.
"""

from __future__ import annotations

from collections.abc import Iterable

from rillet.client.cluster import ClusterClient
from rillet.client.leader_rounds import LeaderRequest, PartitionAnswer, ask_leaders
from rillet.client.types import TopicPartition
from rillet.wire.messages import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsResponse

OffsetQuery = dict[TopicPartition, int]
OffsetAnswer = dict[TopicPartition, tuple[int, int]]  # tp -> (offset, timestamp_ms)


def _build(query: OffsetQuery) -> ListOffsetsRequest:
    return ListOffsetsRequest(
        [ListOffsetsPartition(tp.topic, tp.partition, ts) for tp, ts in query.items()]
    )


def _read(response: ListOffsetsResponse) -> Iterable[PartitionAnswer[tuple[int, int]]]:
    for r in response.partitions:
        tp = TopicPartition(r.topic, r.partition)
        yield PartitionAnswer(tp, r.error_code, (r.offset, r.timestamp_ms))


_LIST_OFFSETS: LeaderRequest[int, tuple[int, int]] = LeaderRequest("offset lookup", _build, _read)


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
    return await ask_leaders(cluster, _LIST_OFFSETS, query, timeout_s, backoff_s, max_backoff_s)
