"""DeleteRecords from the client: each partition's leader moves its log start forward.

Asked of each partition's leader, with retries, by :mod:`leader_rounds`. A resend is safe:
moving a log start to where it already is changes nothing. The leader answers once every
in-sync replica has the new log start; each leader gets the rest of the operation's time
to wait for that.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rillet.client.cluster import ClusterClient
from rillet.client.leader_rounds import LeaderRequest, PartitionAnswer, ask_leaders
from rillet.client.types import TopicPartition
from rillet.wire.record_deletion_messages import (
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
)


def _request(timeout_ms: int) -> LeaderRequest[int, int]:
    def build(query: dict[TopicPartition, int]) -> DeleteRecordsRequest:
        return DeleteRecordsRequest(
            [DeleteRecordsPartition(tp.topic, tp.partition, o) for tp, o in query.items()],
            timeout_ms,
        )

    def read(response: DeleteRecordsResponse) -> Iterable[PartitionAnswer[int]]:
        for r in response.partitions:
            yield PartitionAnswer(
                TopicPartition(r.topic, r.partition), r.error_code, r.low_watermark
            )

    return LeaderRequest("record deletion", build, read)


async def delete_records(
    cluster: ClusterClient,
    before: Mapping[TopicPartition, int],
    timeout_ms: int,
    backoff_s: float = 0.1,
) -> dict[TopicPartition, int]:
    """Delete every record below ``before[tp]`` (-1: below the high watermark); each
    partition's new low watermark. Raises OffsetOutOfRangeError for an offset above the
    high watermark, UnknownTopicOrPartitionError, or ClientTimeoutError."""
    return await ask_leaders(cluster, _request(timeout_ms), before, timeout_ms / 1000, backoff_s)
