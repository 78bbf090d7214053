"""The leader's side of a follower's fetch (a Fetch request with ``replica_id`` set).

The caller must prove the cluster secret (a forged follower fetch would move the high
watermark and make acks=all lie); then each partition is answered by
:func:`~rillet.broker.replica.replication.follower_fetch_answer.answer_follower_fetch`, which holds
the decisions (epoch fencing, divergence, reads up to the log end). This module adds the
node's side: finding the replica, the leader's replication throttle (a partition its
``leader.replication.throttled.rate`` covers gets no records while the node's bucket is in
debt), and how the bytes leave (a duplicated descriptor, sent with sendfile).
"""

from __future__ import annotations

import errno
import math

from rillet.broker.handlers.context import BrokerContext
from rillet.broker.replica.replication.follower_fetch_answer import answer_if_hosted, is_diverging
from rillet.wire import disk_io
from rillet.wire.frame import JOIN_REGION_BYTES, FileRegion, blob_length
from rillet.wire.messages import FetchPartition, FetchPartitionResponse

__all__ = [
    "hold_region",
    "is_diverging",
    "read_for_follower",
    "refused_follower",
    "throttle_wait_s",
]


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
    now_ms = ctx.steady_ms()
    throttle = ctx.leader_throttle
    state = ctx.metadata.state
    throttled = (
        replica is not None
        and throttle is not None
        and throttle.refresh(state, now_ms)
        and throttle.covers(state, p.topic, p.partition, replica_id)
    )
    if throttled and throttle is not None and throttle.gate.bucket is not None:
        allowance = throttle.gate.bucket.available_bytes(now_ms)
        remaining = min(remaining, allowance)
        first = first and allowance > 0  # in debt: no records this time
    answer = answer_if_hosted(
        replica,
        lambda: ctx.metadata.has_partition(p.topic, p.partition),
        p,
        replica_id,
        now_ms,
        remaining,
        first,
        hold_region,
        request_arrived_ms,
    )
    if throttled and throttle is not None:
        throttle.gate.charge(blob_length(answer.records), now_ms)
    return answer


def throttle_wait_s(ctx: BrokerContext) -> float:
    """How long the leader's replication throttle is in debt (inf: it is not): a follower's
    long poll ends then, so the bytes it held back go as soon as they may."""
    throttle = ctx.leader_throttle
    wait_ms = 0 if throttle is None else throttle.gate.wait_ms(ctx.steady_ms())
    return wait_ms / 1000 if wait_ms > 0 else math.inf


def hold_region(region: FileRegion) -> FileRegion | bytes:
    """What an answer carries of a log's ``region``: a small one (up to
    ``JOIN_REGION_BYTES``, which the sender would read and join rather than sendfile) its
    bytes, read now, in the read's slices of loop time (a follower of thousands of
    partitions gets a few batches of each, and a duplicated descriptor per partition cost
    a dup, a read and a close in the one step that sent the answer); a larger one a
    duplicated descriptor, so the bytes leave with sendfile even if the segment is deleted
    meanwhile; or, when the process has no descriptor to spare (EMFILE / ENFILE: thousands
    of partitions in one answer near the open-file limit), the bytes themselves. Reads and
    the descriptor go through ``disk_io``, so a disk fault reaches them (an OSError here
    fails the partition's answer, never a short one)."""
    if region.length <= JOIN_REGION_BYTES:
        data = disk_io.pread(region.fd, region.length, region.position)
        if len(data) == region.length:
            return data
    try:
        return FileRegion(disk_io.dup(region.fd), region.position, region.length)
    except OSError as exc:
        if exc.errno not in (errno.EMFILE, errno.ENFILE):
            raise
        return disk_io.pread(region.fd, region.length, region.position)
