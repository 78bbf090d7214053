"""The leader's side of a follower's fetch (a Fetch request with ``replica_id`` set).

Kafka's rules, in order, for each partition:

1. the caller must prove the cluster secret: a forged follower fetch would move the high
   watermark and make acks=all lie;
2. this node must lead the partition, in the epoch the follower believes in
   (FENCED_LEADER_EPOCH when the follower's epoch is older, UNKNOWN_LEADER_EPOCH when it is
   newer than what this node has applied yet);
3. divergence (KIP-320): where did the follower's last fetched epoch end in this log? If it
   ended before the fetch offset, or this log never had that epoch, the answer carries the
   diverging epoch and its end offset and no records; the follower truncates there first;
4. the fetch offset tells the leader what the follower holds (it may advance the high
   watermark), and records are returned up to the log end, not the high watermark: a
   follower copies records before they are committed.
"""

from __future__ import annotations

import errno
import logging
import os

from rillet.broker.handlers.context import BrokerContext
from rillet.broker.partition_replica import PartitionReplica
from rillet.partition_store.errors import LogDamaged, OffsetOutOfRange, StoreError
from rillet.wire.error_codes import ErrorCode
from rillet.wire.frame import FileRegion
from rillet.wire.messages import FetchPartition, FetchPartitionResponse

log = logging.getLogger(__name__)

_EMPTY = b""


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
    if replica is None or replica.deleted or not replica.is_leader:
        known = ctx.metadata.has_partition(p.topic, p.partition)
        code = ErrorCode.NOT_LEADER_OR_FOLLOWER if known else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return FetchPartitionResponse(p.topic, p.partition, code, -1, -1, _EMPTY)
    epoch_error = _epoch_error(replica, p.current_leader_epoch)
    if epoch_error is not None:
        return _answer(p, replica, epoch_error)
    plog = replica.log
    if p.last_fetched_epoch >= 0:
        epoch, end_offset = plog.end_offset_for_epoch(p.last_fetched_epoch)
        if epoch < p.last_fetched_epoch or end_offset < p.fetch_offset:
            return _answer(p, replica, ErrorCode.NONE, diverging=(epoch, end_offset))
    if not plog.log_start_offset <= p.fetch_offset <= plog.log_end_offset:
        return _answer(p, replica, ErrorCode.OFFSET_OUT_OF_RANGE)
    replica.on_follower_fetch(
        replica_id, p.fetch_offset, ctx.now_ms(), request_arrived_ms, p.log_start_offset
    )
    limit = min(max(p.partition_max_bytes, 0), remaining)
    region: FileRegion | bytes | None = None
    if p.fetch_offset < plog.log_end_offset and (limit > 0 or first):
        # Asked again for what it was just sent: it could not append it (a bad CRC, most
        # likely), so check those bytes again rather than trust their verified mark.
        recheck = replica.follower_refetches(replica_id, p.fetch_offset)
        try:
            result = plog.read(p.fetch_offset, limit, min_one_batch=first, recheck=recheck)
        except OffsetOutOfRange:
            return _answer(p, replica, ErrorCode.OFFSET_OUT_OF_RANGE)
        except LogDamaged as exc:  # bit rot: never replicated (see fetch.py)
            replica.report_damage(exc.damage)
            return _answer(p, replica, replica.damaged_read_error())
        except (StoreError, OSError) as exc:
            log.error("read of %s-%d for replica %d failed: %s", *_key(p), replica_id, exc)
            return _answer(p, replica, ErrorCode.STORAGE_ERROR)
        if result.region is not None and result.region.length > 0:
            r = result.region
            region = hold_region(r.fd, r.position, r.length)
        replica.served_follower(replica_id, p.fetch_offset, region is not None)
    return _answer(p, replica, ErrorCode.NONE, records=region)


def hold_region(fd: int, position: int, length: int) -> FileRegion | bytes:
    """What an answer carries of ``[position, position + length)`` of a log: a duplicated
    descriptor, so the bytes leave with sendfile even if the segment is deleted meanwhile;
    or, when the process has no descriptor to spare (EMFILE / ENFILE: thousands of
    partitions in one answer near the open-file limit), the bytes themselves, read now."""
    try:
        return FileRegion(os.dup(fd), position, length)
    except OSError as exc:
        if exc.errno not in (errno.EMFILE, errno.ENFILE):
            raise
        return os.pread(fd, length, position)


def is_diverging(response: FetchPartitionResponse) -> bool:
    return response.diverging_epoch >= 0 or response.diverging_end_offset >= 0


def _epoch_error(replica: PartitionReplica, follower_epoch: int) -> ErrorCode | None:
    if follower_epoch < 0:
        return None
    if follower_epoch < replica.leader_epoch:
        return ErrorCode.FENCED_LEADER_EPOCH
    if follower_epoch > replica.leader_epoch:
        return ErrorCode.UNKNOWN_LEADER_EPOCH
    return None


def _key(p: FetchPartition) -> tuple[str, int]:
    return p.topic, p.partition


def _answer(
    p: FetchPartition,
    replica: PartitionReplica,
    code: ErrorCode,
    records: FileRegion | bytes | None = None,
    diverging: tuple[int, int] | None = None,
) -> FetchPartitionResponse:
    plog = replica.log
    epoch, end_offset = diverging if diverging is not None else (-1, -1)
    if diverging is not None and epoch < 0 and end_offset < 0:
        end_offset = replica.high_watermark  # no common epoch: fall back to what is committed
    return FetchPartitionResponse(
        p.topic,
        p.partition,
        code,
        replica.high_watermark,
        plog.log_start_offset,
        records if records is not None else _EMPTY,
        log_end_offset=plog.log_end_offset,
        diverging_epoch=epoch,
        diverging_end_offset=end_offset,
        leader_epoch=replica.leader_epoch,
    )
