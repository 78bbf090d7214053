"""The leader's answer to one partition of a follower's fetch: the decisions, no I/O.

Kafka's rules, in order (the caller has already checked the cluster-secret proof and found
the replica):

1. this node must lead the partition, in the epoch the follower believes in
   (FENCED_LEADER_EPOCH when the follower's epoch is older, UNKNOWN_LEADER_EPOCH when it is
   newer than what this node has applied yet);
2. divergence (KIP-320): where did the follower's last fetched epoch end in this log? If it
   ended before the fetch offset, or this log never had that epoch, the answer carries the
   diverging epoch and its end offset and no records; the follower truncates there first;
3. the fetch offset tells the leader what the follower holds (it may advance the high
   watermark), and records are returned up to the log end, not the high watermark: a
   follower copies records before they are committed.

Why apart from the request handler: the replication simulation (tests) answers its
followers with this very function, on real logs; the handler adds only the lookup and how
the bytes leave (``hold``: a duplicated descriptor for sendfile on a node, a copy in the
simulation).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.partition_store.errors import LogDamaged, OffsetOutOfRange, StoreError
from rillet.wire.error_codes import ErrorCode
from rillet.wire.frame import FileRegion
from rillet.wire.messages import FetchPartition, FetchPartitionResponse

log = logging.getLogger(__name__)

_EMPTY = b""

# How an answer carries a range of a log file: the region itself (sendfile), or bytes.
HoldRegion = Callable[[FileRegion], FileRegion | bytes]


def answer_if_hosted(
    replica: PartitionReplica | None,
    known: Callable[[], bool],
    p: FetchPartition,
    replica_id: int,
    now_ms: int,
    remaining_bytes: int,
    first: bool,
    hold: HoldRegion,
    request_arrived_ms: int | None = None,
) -> FetchPartitionResponse:
    """:func:`answer_follower_fetch` for the replica this node hosts for ``p``, if any: a
    partition not hosted here (or being deleted) is NOT_LEADER_OR_FOLLOWER when ``known()``
    (the metadata has it: the follower should look for its leader again), else
    UNKNOWN_TOPIC_OR_PARTITION."""
    if replica is None or replica.deleted:
        code = ErrorCode.NOT_LEADER_OR_FOLLOWER if known() else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return FetchPartitionResponse(p.topic, p.partition, code, -1, -1, _EMPTY)
    return answer_follower_fetch(
        replica, p, replica_id, now_ms, remaining_bytes, first, hold, request_arrived_ms
    )


def answer_follower_fetch(
    replica: PartitionReplica,
    p: FetchPartition,
    replica_id: int,
    now_ms: int,
    remaining_bytes: int,
    first: bool,
    hold: HoldRegion,
    request_arrived_ms: int | None = None,
) -> FetchPartitionResponse:
    """The answer for partition ``p`` of follower ``replica_id``'s fetch; records count
    against ``remaining_bytes`` (the first partition returns at least one batch)."""
    if replica.deleted or not replica.is_leader:
        return FetchPartitionResponse(
            p.topic, p.partition, ErrorCode.NOT_LEADER_OR_FOLLOWER, -1, -1, _EMPTY
        )
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
        replica_id, p.fetch_offset, now_ms, request_arrived_ms, p.log_start_offset
    )
    limit = min(max(p.partition_max_bytes, 0), remaining_bytes)
    records: FileRegion | bytes | None = None
    if p.fetch_offset < plog.log_end_offset and (limit > 0 or first):
        # Asked again for what it was just sent: it could not append it (a bad CRC, most
        # likely), so check those bytes again rather than trust their verified mark.
        recheck = replica.follower_refetches(replica_id, p.fetch_offset)
        try:
            result = plog.read(p.fetch_offset, limit, min_one_batch=first, recheck=recheck)
            if result.region is not None and result.region.length > 0:
                records = hold(result.region)  # reads small regions now
        except OffsetOutOfRange:
            return _answer(p, replica, ErrorCode.OFFSET_OUT_OF_RANGE)
        except LogDamaged as exc:  # bit rot: never replicated (see handlers/fetch.py)
            replica.report_damage(exc.damage)
            return _answer(p, replica, replica.damaged_read_error())
        except (StoreError, OSError) as exc:
            log.error("read of %s for replica %d failed: %s", replica.key, replica_id, exc)
            return _answer(p, replica, ErrorCode.STORAGE_ERROR)
        replica.served_follower(replica_id, p.fetch_offset, records is not None)
    return _answer(p, replica, ErrorCode.NONE, records=records)


def is_diverging(response: FetchPartitionResponse) -> bool:
    return response.diverging_epoch >= 0 or response.diverging_end_offset >= 0


def answers_at_once(response: FetchPartitionResponse) -> bool:
    """A partition's answer that ends a fetch's long poll whatever its size: an error, or a
    divergence the follower must cut its log by."""
    return response.error_code != ErrorCode.NONE or is_diverging(response)


def long_poll_ends(total_bytes: int, min_bytes: int, answered_at_once: bool) -> bool:
    """Whether a fetch is answered now rather than held in its long poll (the wait's
    deadline aside): ``min_bytes`` of records were read, or some partition's answer
    :func:`answers_at_once`."""
    return total_bytes >= min_bytes or answered_at_once


class LongPoll:
    """One fetch's long poll: answered once it has ``min_bytes`` of records or an answer
    that cannot wait (:func:`long_poll_ends`), or at its deadline (seconds on the caller's
    clock); until then it waits for news. The fetch handler runs it on trio's clock, the
    replication simulation (tests) on its virtual one."""

    def __init__(self, deadline_s: float) -> None:
        self.deadline_s = deadline_s

    def shorten_to(self, at_s: float) -> None:
        """Answer by ``at_s`` at the latest (bytes a leader's throttle held back from a
        follower go as soon as they may)."""
        self.deadline_s = min(self.deadline_s, at_s)

    def ends(
        self,
        total_bytes: int,
        min_bytes: int,
        answered_at_once: bool,
        now_s: float,
        left_over: bool = False,
    ) -> bool:
        """Whether the fetch is answered now (``left_over``: the read stopped short, the
        rest comes with the next request)."""
        return (
            long_poll_ends(total_bytes, min_bytes, answered_at_once)
            or left_over
            or now_s >= self.deadline_s
        )


def _epoch_error(replica: PartitionReplica, follower_epoch: int) -> ErrorCode | None:
    if follower_epoch < 0:
        return None
    if follower_epoch < replica.leader_epoch:
        return ErrorCode.FENCED_LEADER_EPOCH
    if follower_epoch > replica.leader_epoch:
        return ErrorCode.UNKNOWN_LEADER_EPOCH
    return None


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
