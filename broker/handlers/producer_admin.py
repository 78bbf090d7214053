"""DescribeProducers (61) and WriteTxnMarkers (27), answered by partition leaders
(docs/transactions.md#hanging-transactions).

DescribeProducers lists, per partition this node leads, every producer its log knows: epoch,
last sequence, the time of its last batch, and the first offset of its open transaction here
(-1 when none is open); ``kafka-transactions find-hanging`` and ``describe-producers`` read it.

WriteTxnMarkers is how Kafka's coordinators write markers; here they do not need it (leaders
pull the decisions from the metadata log, broker/replica/txn_marker_writer.py), and it serves what
``kafka-transactions abort`` sends: an abort marker for a *hanging* transaction, one a
partition holds open though no coordinator knows it (its producer's data reached the log
without the partition being added), which pins the last stable offset for ever. Kafka
authorises it as CLUSTER_ACTION on the cluster. A marker older than the producer's epoch here
is refused (INVALID_PRODUCER_EPOCH), as Kafka does; one for a producer with no transaction
open here ends nothing and is harmless.
"""

from __future__ import annotations

import os

import trio

from rillet.broker.handlers.context import BrokerContext
from rillet.partition_store.errors import StoreError
from rillet.partition_store.log import PartitionLog
from rillet.partition_store.producer_state import InvalidProducerEpoch
from rillet.wire import producer_admin_messages as pam
from rillet.wire.batch import HEADER_SIZE, read_header
from rillet.wire.control_batch import ControlType, Marker
from rillet.wire.error_codes import ErrorCode
from rillet.wire.transaction_messages import TxnPartitionResult, TxnTopicPartition

# How long a marker may take to be committed (the high watermark passing it) before the
# partition is answered REQUEST_TIMED_OUT; Kafka's admin client then retries.
MARKER_COMMIT_WAIT_S = 10.0


def handle_describe_producers(
    ctx: BrokerContext, req: pam.DescribeProducersRequest
) -> pam.DescribeProducersResponse:
    out = []
    for tp in req.partitions:
        replica = ctx.leader_replica(tp.topic, tp.partition)
        if isinstance(replica, ErrorCode):
            out.append(pam.PartitionProducers(tp.topic, tp.partition, replica))
            continue
        log = replica.log
        producers = [
            pam.ActiveProducer(
                pid,
                epoch,
                last_sequence,
                _batch_time_ms(log, last_batch_offset),
                -1,
                txn_start,
            )
            for pid, epoch, last_sequence, last_batch_offset, txn_start in log.producers()
        ]
        out.append(pam.PartitionProducers(tp.topic, tp.partition, ErrorCode.NONE, producers))
    return pam.DescribeProducersResponse(out)


def _batch_time_ms(log: PartitionLog, offset: int) -> int:
    """The max timestamp of the batch at ``offset`` (-1 when it cannot be read: gone with
    retention, or damaged)."""
    if offset < 0:
        return -1
    try:
        region = log.read(offset, 1).region
    except (StoreError, OSError):
        return -1
    if region is None:
        return -1
    data = os.pread(region.fd, HEADER_SIZE, region.position)
    if len(data) < HEADER_SIZE:
        return -1
    return int(read_header(data).max_timestamp_ms)


async def handle_write_txn_markers(
    ctx: BrokerContext, req: pam.WriteTxnMarkersRequest
) -> pam.WriteTxnMarkersResponse:
    out = []
    for spec in req.markers:
        kind = ControlType.COMMIT if spec.committed else ControlType.ABORT
        marker = Marker(spec.producer_id, spec.producer_epoch, kind, spec.coordinator_epoch)
        results = [
            TxnPartitionResult(tp.topic, tp.partition, await _write_one(ctx, tp, marker))
            for tp in spec.partitions
        ]
        out.append(pam.MarkerResult(spec.producer_id, results))
    return pam.WriteTxnMarkersResponse(out)


async def _write_one(ctx: BrokerContext, tp: TxnTopicPartition, marker: Marker) -> int:
    replica = ctx.leader_replica(tp.topic, tp.partition)
    if isinstance(replica, ErrorCode):
        return int(replica)
    try:
        result = replica.append_marker_as_leader(marker, ctx.now_ms())
    except InvalidProducerEpoch:
        return int(ErrorCode.INVALID_PRODUCER_EPOCH)
    except (StoreError, OSError):
        return int(ErrorCode.STORAGE_ERROR)
    with trio.move_on_after(MARKER_COMMIT_WAIT_S):
        if await replica.wait_for_high_watermark(result.last_offset + 1, replica.leader_epoch):
            return int(ErrorCode.NONE)
        return int(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    return int(ErrorCode.REQUEST_TIMED_OUT)
