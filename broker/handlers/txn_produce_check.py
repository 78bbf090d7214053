"""KIP-890 part 1: a transaction's first batch in a partition is appended only if the
coordinator added that partition to the producer's ongoing transaction.

Without the check, a zombie producer's late retry (of a transaction that was aborted or
committed without it) would open a transaction no coordinator ends, pinning the partition's
last stable offset. Kafka's leader asks the coordinator (AddPartitionsToTxn verify_only);
here the coordinator's decisions are in the metadata log every node follows, so the leader
reads its own committed registry, first waiting briefly for its metadata to catch up with
the controller's answer the producer already has (:data:`VERIFY_WAIT_S`).
"""

from __future__ import annotations

from rillet.broker.handlers.context import BrokerContext
from rillet.metadata_quorum.state import MetadataState
from rillet.metadata_quorum.txn_coordinator import verify_partitions
from rillet.metadata_quorum.txn_registry import TxnPartition
from rillet.wire.batch import HEADER_SIZE, read_header
from rillet.wire.control_batch import is_transactional
from rillet.wire.error_codes import ErrorCode
from rillet.wire.frame import FileRegion
from rillet.wire.messages import ProduceRequest

# How long a leader waits for the metadata that adds a partition to a transaction before it
# refuses the transaction's first batch there (INVALID_TXN_STATE).
VERIFY_WAIT_S = 2.0


def unverified(ctx: BrokerContext, req: ProduceRequest, state: MetadataState) -> set[int]:
    """Indexes of ``req.partitions`` whose batch would open a transaction that ``state``
    does not show the partition added to (the producer's id, epoch and transactional id)."""
    out: set[int] = set()
    for i, p in enumerate(req.partitions):
        records = p.records
        if isinstance(records, FileRegion) or len(records) < HEADER_SIZE:
            continue
        header = read_header(records)
        if not is_transactional(header):
            continue
        replica = ctx.replicas.get(p.topic, p.partition)
        if replica is None or not replica.is_leader or not replica.log.starts_transaction(header):
            continue  # refused elsewhere, or the transaction is open here already
        part = TxnPartition(p.topic, p.partition)
        verdict = verify_partitions(
            state.transactions,
            req.transactional_id or "",
            header.producer_id,
            header.producer_epoch,
            [part],
        )
        if verdict[part] != ErrorCode.NONE:
            out.add(i)
    return out


async def wait_for_verification(ctx: BrokerContext, req: ProduceRequest) -> set[int]:
    """The partitions still unverified once the metadata caught up, or the wait ended."""
    await ctx.metadata.wait_until(lambda s: not unverified(ctx, req, s), VERIFY_WAIT_S)
    return unverified(ctx, req, ctx.metadata.state)
