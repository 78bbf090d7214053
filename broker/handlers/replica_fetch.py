"""The leader's side of a follower's fetch (a Fetch request with ``replica_id`` set).

The caller must prove the cluster secret (a forged follower fetch would move the high
watermark and make acks=all lie); then each partition is answered by
:func:`~rillet.broker.replication.follower_fetch_answer.answer_follower_fetch`, which holds
the decisions (epoch fencing, divergence, reads up to the log end). This module adds the
node's side: finding the replica, and how the bytes leave (a duplicated descriptor, sent
with sendfile).
"""

from __future__ import annotations

import errno
import os

from rillet.broker.handlers.context import BrokerContext
from rillet.broker.part_sender import JOIN_REGION_BYTES
from rillet.broker.replication.follower_fetch_answer import answer_follower_fetch, is_diverging
from rillet.wire.error_codes import ErrorCode
from rillet.wire.frame import FileRegion
from rillet.wire.messages import FetchPartition, FetchPartitionResponse

__all__ = ["hold_region", "is_diverging", "read_for_follower", "refused_follower"]


def refused_follower(ctx: BrokerContext, auth: bytes) -> str | None:
    """Why a follower fetch is refused (no proof of the cluster secret), else None."""
    cluster_auth = ctx.metadata.auth
    return cluster_auth.check(cluster_auth.cluster_id, auth)


def read_for_follower(
    ctx: BrokerContext,
    p: FetchPartition,
    replica_id: int,
    remaining: int,
    first: bool,
    request_arrived_ms: int | None = None,
) -> FetchPartitionResponse:
    replica = ctx.replicas.get(p.topic, p.partition)
    if replica is None or replica.deleted:
        known = ctx.metadata.has_partition(p.topic, p.partition)
        code = ErrorCode.NOT_LEADER_OR_FOLLOWER if known else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return FetchPartitionResponse(p.topic, p.partition, code, -1, -1, b"")
    return answer_follower_fetch(
        replica, p, replica_id, ctx.steady_ms(), remaining, first, hold_region, request_arrived_ms
    )


def hold_region(region: FileRegion) -> FileRegion | bytes:
    """What an answer carries of a log's ``region``: a small one (up to
    ``JOIN_REGION_BYTES``, which the sender would read and join rather than sendfile) its
    bytes, read now, in the read's slices of loop time (a follower of thousands of
    partitions gets a few batches of each, and a duplicated descriptor per partition cost
    a dup, a read and a close in the one step that sent the answer); a larger one a
    duplicated descriptor, so the bytes leave with sendfile even if the segment is deleted
    meanwhile; or, when the process has no descriptor to spare (EMFILE / ENFILE: thousands
    of partitions in one answer near the open-file limit), the bytes themselves."""
    if region.length <= JOIN_REGION_BYTES:
        data = os.pread(region.fd, region.length, region.position)
        if len(data) == region.length:
            return data
    try:
        return FileRegion(os.dup(region.fd), region.position, region.length)
    except OSError as exc:
        if exc.errno not in (errno.EMFILE, errno.ENFILE):
            raise
        return os.pread(region.fd, region.length, region.position)
