"""The transaction coordinator's decisions (KIP-98, with KIP-890's server-side checks): pure.

Every function takes the registry as it is (``txn_registry``), the request and the time, and
returns a :class:`TxnAnswer`: the metadata records to commit (the new state of the
transactional id, sometimes a producer-id block or group offsets) and the error to answer
with. Nothing here does I/O or reads a clock; the controller commits the records and
carries out what :func:`pending_markers` lists (WriteTxnMarkers to partition leaders).

The rules, as Kafka's TransactionCoordinator has them:

- InitProducerId gives a transactional id a producer id and bumps its epoch on every call:
  a newer producer instance fences the older one (zombie fencing). An ongoing transaction
  of the fenced instance is aborted first (PrepareEpochFence, then markers), and the new
  instance is told CONCURRENT_TRANSACTIONS until that abort is complete.
- Every later request must carry the current (producer id, epoch): another id is
  INVALID_PRODUCER_ID_MAPPING, another epoch PRODUCER_FENCED.
- AddPartitionsToTxn / AddOffsetsToTxn move Empty/Complete* to Ongoing and date the
  transaction; EndTxn moves Ongoing to PrepareCommit/PrepareAbort; once every marker is
  written, :func:`markers_written` completes it (and applies its group offsets on commit).
- A transaction older than its ``transaction.timeout.ms`` is aborted with a bumped epoch
  (:func:`expire_timed_out`): the hung producer is fenced, its partitions unblocked.
- KIP-890 part 1: :func:`verify_partitions` tells a partition leader whether a partition
  was added to the producer's ongoing transaction before it appends the first batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from rillet.metadata_quorum.group_records import CommittedOffset, OffsetsCommitted
from rillet.metadata_quorum.records import ProducerIds
from rillet.metadata_quorum.txn_registry import (
    TransactionRecord,
    TransactionRemoved,
    TxnOffset,
    TxnPartition,
    TxnRegistry,
    TxnState,
)
from rillet.wire.error_codes import ErrorCode

# An epoch is an int16; Kafka starts a new producer id before the epoch would overflow.
MAX_PRODUCER_EPOCH = 0x7FFF - 1
NO_COORDINATOR_BROKER = -1  # ProducerIds blocks of one id, for a transactional id

TxnOutcome = TransactionRecord | TransactionRemoved | ProducerIds | OffsetsCommitted


@dataclass(frozen=True, slots=True)
class TxnConfig:
    """The coordinator's limits, Kafka's names (checked at start-up)."""

    transaction_max_timeout_ms: int = 900_000
    transactional_id_expiration_ms: int = 604_800_000

    def check(self) -> None:
        if self.transaction_max_timeout_ms < 1:
            raise ValueError("transaction.max.timeout.ms must be >= 1")
        if self.transactional_id_expiration_ms < 1:
            raise ValueError("transactional.id.expiration.ms must be >= 1")


@dataclass(frozen=True, slots=True)
class TxnAnswer:
    records: list[TxnOutcome] = field(default_factory=list)
    error: ErrorCode = ErrorCode.NONE
    producer_id: int = -1
    producer_epoch: int = -1


@dataclass(frozen=True, slots=True)
class MarkerTask:
    """Markers to write: one per partition, each leader reporting to :func:`markers_written`."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    commit: bool
    partitions: list[TxnPartition]
    # When the transaction started: the producer id and epoch stay the same from one
    # transaction to the next, so this tells two decisions of one producer apart.
    started_ms: int = -1


def _refused(error: ErrorCode) -> TxnAnswer:
    return TxnAnswer([], error)


def _check_producer(cur: TransactionRecord | None, pid: int, epoch: int) -> ErrorCode | None:
    if cur is None or cur.producer_id != pid:
        return ErrorCode.INVALID_PRODUCER_ID_MAPPING
    if cur.producer_epoch != epoch:
        return ErrorCode.PRODUCER_FENCED
    return None


def init_producer_id(
    registry: TxnRegistry,
    config: TxnConfig,
    transactional_id: str,
    timeout_ms: int,
    now_ms: int,
    next_producer_id: int,
    expected: tuple[int, int] | None = None,
) -> TxnAnswer:
    """InitProducerId with a transactional id; ``expected`` is the (id, epoch) a producer
    that already had one sends (KIP-360), ``next_producer_id`` the controller's next free."""
    if not transactional_id:
        return _refused(ErrorCode.INVALID_REQUEST)
    if not 0 < timeout_ms <= config.transaction_max_timeout_ms:
        return _refused(ErrorCode.INVALID_TRANSACTION_TIMEOUT)
    cur = registry.get(transactional_id)
    if cur is None:
        return _fresh_producer(transactional_id, timeout_ms, now_ms, next_producer_id, -1)
    if expected is not None and expected != (cur.producer_id, cur.producer_epoch):
        if expected == (cur.producer_id, cur.last_producer_epoch) and (
            cur.txn_state is TxnState.EMPTY
        ):  # a retry whose answer was lost: the bump it asked for is done
            return TxnAnswer([], ErrorCode.NONE, cur.producer_id, cur.producer_epoch)
        return _refused(ErrorCode.PRODUCER_FENCED)
    state = cur.txn_state
    if state.preparing or state is TxnState.DEAD:
        return _refused(ErrorCode.CONCURRENT_TRANSACTIONS)
    if state is TxnState.ONGOING:  # fence the old instance: abort its transaction first
        fenced = replace(
            cur,
            producer_epoch=cur.producer_epoch + 1,
            last_producer_epoch=cur.producer_epoch,
            state=TxnState.PREPARE_EPOCH_FENCE,
            updated_ms=now_ms,
        )
        return TxnAnswer([fenced], ErrorCode.CONCURRENT_TRANSACTIONS)
    if cur.producer_epoch >= MAX_PRODUCER_EPOCH:
        return _fresh_producer(
            transactional_id, timeout_ms, now_ms, next_producer_id, cur.producer_epoch
        )
    bumped = TransactionRecord(
        transactional_id,
        cur.producer_id,
        cur.producer_epoch + 1,
        cur.producer_epoch,
        timeout_ms,
        TxnState.EMPTY,
        updated_ms=now_ms,
    )
    return TxnAnswer([bumped], ErrorCode.NONE, cur.producer_id, bumped.producer_epoch)


def _fresh_producer(
    transactional_id: str, timeout_ms: int, now_ms: int, producer_id: int, last_epoch: int
) -> TxnAnswer:
    record = TransactionRecord(
        transactional_id, producer_id, 0, last_epoch, timeout_ms, TxnState.EMPTY, updated_ms=now_ms
    )
    block = ProducerIds(NO_COORDINATOR_BROKER, producer_id, 1)
    return TxnAnswer([block, record], ErrorCode.NONE, producer_id, 0)


def add_partitions(
    registry: TxnRegistry,
    transactional_id: str,
    producer_id: int,
    producer_epoch: int,
    partitions: Iterable[TxnPartition],
    now_ms: int,
    group_id: str | None = None,
) -> TxnAnswer:
    """AddPartitionsToTxn (or, with ``group_id``, AddOffsetsToTxn)."""
    cur = registry.get(transactional_id)
    error = _check_producer(cur, producer_id, producer_epoch)
    if error is not None or cur is None:
        return _refused(error or ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    state = cur.txn_state
    if state.preparing:
        return _refused(ErrorCode.CONCURRENT_TRANSACTIONS)
    if state is TxnState.DEAD:
        return _refused(ErrorCode.INVALID_TXN_STATE)
    ongoing = state is TxnState.ONGOING
    wanted = (
        list(dict.fromkeys([*cur.partitions, *partitions]))
        if ongoing
        else list(dict.fromkeys(partitions))
    )
    groups = list(cur.group_ids) if ongoing else []
    if group_id is not None and group_id not in groups:
        groups.append(group_id)
    if ongoing and wanted == cur.partitions and groups == cur.group_ids:
        return TxnAnswer([], ErrorCode.NONE, producer_id, producer_epoch)  # all added already
    record = replace(
        cur,
        state=TxnState.ONGOING,
        partitions=wanted,
        group_ids=groups,
        offsets=list(cur.offsets) if ongoing else [],
        started_ms=cur.started_ms if ongoing else now_ms,
        updated_ms=now_ms,
    )
    return TxnAnswer([record], ErrorCode.NONE, producer_id, producer_epoch)


def verify_partitions(
    registry: TxnRegistry,
    transactional_id: str,
    producer_id: int,
    producer_epoch: int,
    partitions: Sequence[TxnPartition],
) -> dict[TxnPartition, ErrorCode]:
    """KIP-890 part 1 (AddPartitionsToTxn v4 ``verify_only``): per partition, NONE when it
    is in the producer's ongoing transaction, else INVALID_TXN_STATE (or the producer's
    own error). A leader appends a transaction's first batch only after NONE."""
    cur = registry.get(transactional_id)
    error = _check_producer(cur, producer_id, producer_epoch)
    if error is not None or cur is None:
        return {p: error or ErrorCode.INVALID_PRODUCER_ID_MAPPING for p in partitions}
    added = set(cur.partitions) if cur.txn_state is TxnState.ONGOING else set()
    return {p: ErrorCode.NONE if p in added else ErrorCode.INVALID_TXN_STATE for p in partitions}


def txn_offset_commit(
    registry: TxnRegistry,
    transactional_id: str,
    producer_id: int,
    producer_epoch: int,
    offsets: Sequence[TxnOffset],
    now_ms: int,
) -> TxnAnswer:
    """TxnOffsetCommit: offsets held in the transaction until it ends (applied to their
    group on commit). The group must have been added (AddOffsetsToTxn)."""
    cur = registry.get(transactional_id)
    error = _check_producer(cur, producer_id, producer_epoch)
    if error is not None or cur is None:
        return _refused(error or ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    if cur.txn_state is not TxnState.ONGOING or any(
        o.group_id not in cur.group_ids for o in offsets
    ):
        return _refused(ErrorCode.INVALID_TXN_STATE)
    keys = {(o.group_id, o.topic, o.partition) for o in offsets}
    kept = [o for o in cur.offsets if (o.group_id, o.topic, o.partition) not in keys]
    record = replace(cur, offsets=[*kept, *offsets], updated_ms=now_ms)
    return TxnAnswer([record], ErrorCode.NONE, producer_id, producer_epoch)


def end_txn(
    registry: TxnRegistry,
    transactional_id: str,
    producer_id: int,
    producer_epoch: int,
    commit: bool,
    now_ms: int,
) -> TxnAnswer:
    """EndTxn: decide the transaction (its markers follow); a retry of a decided one is
    answered as it was, the opposite decision is INVALID_TXN_STATE."""
    cur = registry.get(transactional_id)
    error = _check_producer(cur, producer_id, producer_epoch)
    if error is not None or cur is None:
        return _refused(error or ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    state = cur.txn_state
    if state is TxnState.ONGOING:
        decided = TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT
        record = replace(cur, state=decided, updated_ms=now_ms)
        return TxnAnswer([record], ErrorCode.NONE, producer_id, producer_epoch)
    same = {
        TxnState.PREPARE_COMMIT: commit,
        TxnState.PREPARE_ABORT: not commit,
        TxnState.COMPLETE_COMMIT: commit,
        TxnState.COMPLETE_ABORT: not commit,
    }.get(state)
    if same is None or not same:
        return _refused(ErrorCode.INVALID_TXN_STATE)
    if state.preparing:
        return _refused(ErrorCode.CONCURRENT_TRANSACTIONS)
    return TxnAnswer([], ErrorCode.NONE, producer_id, producer_epoch)


def pending_markers(registry: TxnRegistry) -> list[MarkerTask]:
    """Every decided transaction whose markers are not all written (after a controller
    failover too: the state is in the metadata log)."""
    return [
        MarkerTask(
            t.transactional_id,
            t.producer_id,
            t.producer_epoch,
            t.txn_state.marker_commits,
            list(t.partitions),
            t.started_ms,
        )
        for _, t in sorted(registry.transactions.items())
        if t.txn_state.preparing
    ]


def markers_written(
    registry: TxnRegistry,
    transactional_id: str,
    producer_id: int,
    producer_epoch: int,
    written: Iterable[TxnPartition],
    now_ms: int,
    topic_ids: Mapping[str, str],
    started_ms: int = -1,
) -> TxnAnswer:
    """Partition leaders wrote (and committed) the markers of ``written``: they leave the
    decided transaction's list, and partitions of topics that are gone (not in
    ``topic_ids``) with them. When none is left the transaction is complete, and on commit
    its offsets are applied to their groups. A report for another epoch, for another
    transaction of the producer (``started_ms``, when given, is not this one's start: a late
    report of the previous transaction, whose producer id and epoch are the same), or for a
    transaction already complete, changes nothing (INVALID_TXN_STATE)."""
    cur = registry.get(transactional_id)
    if (
        cur is None
        or not cur.txn_state.preparing
        or (cur.producer_id, cur.producer_epoch) != (producer_id, producer_epoch)
        or (started_ms >= 0 and cur.started_ms != started_ms)
    ):
        return _refused(ErrorCode.INVALID_TXN_STATE)
    done_now = set(written)
    remaining = [p for p in cur.partitions if p not in done_now and p.topic in topic_ids]
    if remaining:
        if remaining == cur.partitions:
            return TxnAnswer([], ErrorCode.NONE, producer_id, producer_epoch)
        record = replace(cur, partitions=remaining, updated_ms=now_ms)
        return TxnAnswer([record], ErrorCode.NONE, producer_id, producer_epoch)
    commit = cur.txn_state.marker_commits
    done = TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT
    records: list[TxnOutcome] = [
        replace(
            cur,
            state=done,
            partitions=[],
            group_ids=[],
            offsets=[],
            started_ms=-1,
            updated_ms=now_ms,
        )
    ]
    if commit:
        records += _group_offsets(cur.offsets, now_ms, topic_ids)
    return TxnAnswer(records, ErrorCode.NONE, producer_id, producer_epoch)


def _group_offsets(
    offsets: Sequence[TxnOffset], now_ms: int, topic_ids: Mapping[str, str]
) -> list[OffsetsCommitted]:
    by_group: dict[str, list[CommittedOffset]] = {}
    for o in offsets:
        topic_id = topic_ids.get(o.topic)
        if topic_id is not None:
            by_group.setdefault(o.group_id, []).append(
                CommittedOffset(topic_id, o.partition, o.offset, o.metadata, now_ms, o.leader_epoch)
            )
    return [OffsetsCommitted(group, committed) for group, committed in sorted(by_group.items())]


def expire_timed_out(registry: TxnRegistry, now_ms: int) -> list[TransactionRecord]:
    """Ongoing transactions older than their timeout: aborted with a bumped epoch, which
    fences the producer that left them hanging (its next request is PRODUCER_FENCED)."""
    return [
        replace(
            t,
            producer_epoch=t.producer_epoch + 1,
            last_producer_epoch=t.producer_epoch,
            state=TxnState.PREPARE_ABORT,
            updated_ms=now_ms,
        )
        for _, t in sorted(registry.transactions.items())
        if t.txn_state is TxnState.ONGOING and now_ms - t.started_ms > t.timeout_ms
    ]


def expire_idle(registry: TxnRegistry, config: TxnConfig, now_ms: int) -> list[TransactionRemoved]:
    """Transactional ids with nothing running, unused for ``transactional.id.expiration.ms``."""
    idle = (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)
    return [
        TransactionRemoved(t.transactional_id)
        for _, t in sorted(registry.transactions.items())
        if t.txn_state in idle and now_ms - t.updated_ms >= config.transactional_id_expiration_ms
    ]
