"""Whether an acks=all write is taken, and its answer once its wait has ended: the
decisions, no I/O.

Why apart: the produce handler and the replication simulation (tests) refuse and give the
same verdict from the same code (:func:`acks_all_answer` ends each wait). The wait itself
is ``PartitionReplica.acks_progress`` (the high watermark reached the batch's end in the
leadership that appended it) and its timeout; this says what the client is told.
"""

from __future__ import annotations

from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.wire.error_codes import ErrorCode

STRANDED_MESSAGE = (
    "this leader hears neither the controller nor its in-sync followers: "
    "its leadership may have moved (refresh metadata)"
)


def acks_all_refusal(replica: PartitionReplica) -> tuple[ErrorCode, str] | None:
    """Why the leader ``replica`` refuses an acks=all write before appending it (fewer
    in-sync replicas than ``min.insync.replicas``: NOT_ENOUGH_REPLICAS, as in Kafka), or
    None to append it."""
    isr, min_isr = replica.in_sync_count(), replica.min_insync_replicas
    if isr < min_isr:
        return (
            ErrorCode.NOT_ENOUGH_REPLICAS,
            f"{isr} in-sync replicas, min.insync.replicas is {min_isr}",
        )
    return None


def acks_all_verdict(
    replica: PartitionReplica | None, reached: bool, leader_epoch: int
) -> tuple[ErrorCode, str]:
    """The answer to an acks=all write appended in ``leader_epoch``, once its wait ended
    (``reached``: the high watermark passed it; else the wait timed out or the leadership
    ended). NONE with an empty message is success; a write committed on fewer in-sync
    replicas than ``min.insync.replicas`` is NOT_ENOUGH_REPLICAS_AFTER_APPEND, as in
    Kafka. ``replica`` None: the partition is no longer hosted here (deleted)."""
    if replica is None:
        if reached:
            return ErrorCode.NONE, ""
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "partition deleted while waiting for acks=all"
    isr, min_isr = replica.in_sync_count(), replica.min_insync_replicas
    if reached:
        if isr >= min_isr:
            return ErrorCode.NONE, ""
        # Committed, but on fewer replicas than the topic demands (Kafka answers so too).
        return (
            ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
            f"{isr} in-sync replicas when the write was committed, "
            f"min.insync.replicas is {min_isr}",
        )
    if replica.deleted:
        return (
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            "partition deleted while waiting for acks=all",
        )
    if not replica.is_leader or replica.leader_epoch != leader_epoch:
        return ErrorCode.NOT_LEADER_OR_FOLLOWER, "leadership moved while waiting for acks=all"
    if replica.stranded:
        return ErrorCode.NOT_LEADER_OR_FOLLOWER, STRANDED_MESSAGE
    if isr < min_isr:
        return (
            ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
            "the ISR shrank below min.insync.replicas while waiting for acks=all",
        )
    return (
        ErrorCode.REQUEST_TIMED_OUT,
        "high watermark did not reach the batch within timeout_ms",
    )


def acks_all_answer(
    replica: PartitionReplica | None, target: int, leader_epoch: int, reached: bool
) -> tuple[ErrorCode, str]:
    """The answer to one acks=all wait (for the high watermark to reach ``target`` in
    ``leader_epoch``) once it ended: ``reached`` while waiting, or found passed now (the
    produce handler waits for a request's partitions one after another under one timeout,
    so one that timed out hid the rest, whose high watermark may have passed meanwhile;
    each is answered by its own), then :func:`acks_all_verdict`."""
    passed = replica is not None and bool(replica.acks_progress(target, leader_epoch))
    return acks_all_verdict(replica, reached or passed, leader_epoch)
