"""Idempotent producers' recent batches in one partition: what makes a retry harmless.

An idempotent producer numbers its records per partition (``base_sequence`` in the batch
header, with its producer id and epoch). The partition keeps, per producer, the sequence
ranges and offsets of its last :data:`MAX_BATCHES_PER_PRODUCER` batches (Kafka keeps 5, the
most a producer may have in flight). A batch that repeats one of them is a retry whose first
attempt was written: it is answered with the original offsets and not written again. A batch
that skips ahead is OUT_OF_ORDER_SEQUENCE, an older producer epoch INVALID_PRODUCER_EPOCH.

Leaders and followers keep the table alike (followers from the batches they copy), so a new
leader dedupes retries of batches its predecessor wrote. It is rebuilt on open from the
``producer-state`` snapshot (CBOR, written on clean close and segment roll) plus the batch
headers after it — headers only, never records — and cut back when the log is truncated.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cbor2

from rillet.partition_store.batch_scan import iter_headers
from rillet.partition_store.errors import StoreError
from rillet.partition_store.layout import PRODUCER_STATE_FILE
from rillet.partition_store.segment import LogSegment
from rillet.partition_store.transaction_state import AbortedTxn, TransactionTable
from rillet.wire import disk_io
from rillet.wire.atomic_file import SyncBatch, write_atomically
from rillet.wire.batch import NO_PRODUCER_ID, BatchHeader
from rillet.wire.control_batch import Marker, is_control, read_marker
from rillet.wire.error_codes import ErrorCode
from rillet.wire.errors import CorruptBatch

log = logging.getLogger(__name__)

MAX_BATCHES_PER_PRODUCER = 5
SNAPSHOT_VERSION = 1
_SEQUENCE_MODULUS = 1 << 31  # sequences wrap after int32 max, as Kafka's do


class OutOfOrderSequence(StoreError):
    """A batch's first sequence does not follow the producer's last one."""

    error_code = ErrorCode.OUT_OF_ORDER_SEQUENCE


class InvalidProducerEpoch(StoreError):
    """A batch from an epoch older than the producer's current one (a zombie producer)."""

    error_code = ErrorCode.INVALID_PRODUCER_EPOCH


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    first_sequence: int
    last_sequence: int
    first_offset: int
    last_offset: int


@dataclass(slots=True)
class ProducerEntry:
    epoch: int
    batches: deque[BatchMetadata] = field(
        default_factory=lambda: deque(maxlen=MAX_BATCHES_PER_PRODUCER)
    )


def last_sequence(header: BatchHeader) -> int:
    """The sequence of the batch's last record."""
    return (header.base_sequence + header.last_offset_delta) % _SEQUENCE_MODULUS


def sequence_after(sequence: int) -> int:
    """The sequence that follows ``sequence`` (they wrap after int32 max)."""
    return (sequence + 1) % _SEQUENCE_MODULUS


class ProducerStateTable:
    """Per producer id: its epoch and its last batches (pure data; the log drives it)."""

    def __init__(self) -> None:
        self.producers: dict[int, ProducerEntry] = {}
        self.end_offset = 0  # every batch below this offset is accounted for
        self.transactions = TransactionTable()  # open transactions (transaction_state)
        self.replay_start = 0  # where loading replayed batches from (after the snapshot)

    def check(self, header: BatchHeader) -> BatchMetadata | None:
        """Validate a leader append; returns the original batch when it is a duplicate.

        Raises OutOfOrderSequence / InvalidProducerEpoch. A producer this partition does not
        know (new, or its batches left with retention) may start at any sequence.
        """
        if header.producer_id == NO_PRODUCER_ID or header.base_sequence < 0:
            return None
        entry = self.producers.get(header.producer_id)
        if entry is None:
            return None
        if header.producer_epoch < entry.epoch:
            raise InvalidProducerEpoch(
                f"producer {header.producer_id} epoch {header.producer_epoch} is older than "
                f"{entry.epoch}"
            )
        if header.producer_epoch > entry.epoch:
            if header.base_sequence != 0:
                raise OutOfOrderSequence(
                    f"producer {header.producer_id}: a new epoch must start at sequence 0, "
                    f"not {header.base_sequence}"
                )
            return None
        last = last_sequence(header)
        for batch in entry.batches:
            if batch.first_sequence == header.base_sequence and batch.last_sequence == last:
                return batch
        if entry.batches:
            expected = sequence_after(entry.batches[-1].last_sequence)
            if header.base_sequence != expected:
                raise OutOfOrderSequence(
                    f"producer {header.producer_id}: sequence {header.base_sequence} after "
                    f"{entry.batches[-1].last_sequence} (expected {expected})"
                )
        return None

    def check_append(self, headers: Sequence[BatchHeader]) -> BatchMetadata | None:
        """:meth:`check` for one leader append: the original batch when the append is a
        retry of one already written (then it must be that single batch), else None."""
        if len(headers) == 1:
            return self.check(headers[0])
        last_of: dict[int, int] = {}
        for header in headers:
            pid = header.producer_id
            if pid == NO_PRODUCER_ID or header.base_sequence < 0:
                continue
            if pid in last_of:
                if header.base_sequence != sequence_after(last_of[pid]):
                    raise OutOfOrderSequence(f"producer {pid}: batches of one append skip")
            elif self.check(header) is not None:
                raise OutOfOrderSequence(f"producer {pid}: a retried batch among new ones")
            last_of[pid] = last_sequence(header)
        return None

    def last_offset_of(self, producer_id: int) -> int | None:
        """The offset of the producer's last batch here (None: unknown producer)."""
        entry = self.producers.get(producer_id)
        return entry.batches[-1].last_offset if entry is not None else None

    def update(self, header: BatchHeader, first_offset: int) -> None:
        """Record an appended batch (leader or follower) written at ``first_offset``."""
        last_offset = first_offset + header.last_offset_delta
        self.end_offset = max(self.end_offset, last_offset + 1)
        if header.producer_id == NO_PRODUCER_ID or header.base_sequence < 0:
            return
        entry = self.producers.get(header.producer_id)
        if entry is None or header.producer_epoch > entry.epoch:
            entry = self.producers[header.producer_id] = ProducerEntry(header.producer_epoch)
        entry.batches.append(
            BatchMetadata(header.base_sequence, last_sequence(header), first_offset, last_offset)
        )

    def truncate(self, end_offset: int) -> None:
        """The log was cut at ``end_offset``: forget batches at or after it."""
        for pid in list(self.producers):
            entry = self.producers[pid]
            kept = [b for b in entry.batches if b.last_offset < end_offset]
            if not kept:
                del self.producers[pid]  # unknown again: its next batch is accepted
            elif len(kept) != len(entry.batches):
                entry.batches = deque(kept, maxlen=MAX_BATCHES_PER_PRODUCER)
        self.end_offset = min(self.end_offset, end_offset)
        self.transactions.truncate(end_offset)

    # -- snapshot -----------------------------------------------------------------------------

    def encode(self) -> bytes:
        producers = [
            [
                pid,
                e.epoch,
                [
                    [b.first_sequence, b.last_sequence, b.first_offset, b.last_offset]
                    for b in e.batches
                ],
            ]
            for pid, e in sorted(self.producers.items())
        ]
        doc = {"v": SNAPSHOT_VERSION, "end": self.end_offset, "producers": producers}
        if self.transactions.ongoing:
            doc["txns"] = self.transactions.encode()  # absent in snapshots of older builds
        return cbor2.dumps(doc)

    @classmethod
    def decode(cls, data: bytes) -> ProducerStateTable:
        try:
            doc = cbor2.loads(data)
            if doc["v"] != SNAPSHOT_VERSION:
                raise StoreError(f"unsupported producer-state version {doc['v']!r}")
            table = cls()
            table.end_offset = int(doc["end"])
            for pid, epoch, batches in doc["producers"]:
                entry = table.producers[int(pid)] = ProducerEntry(int(epoch))
                for fs, ls, fo, lo in batches:
                    entry.batches.append(BatchMetadata(int(fs), int(ls), int(fo), int(lo)))
            table.transactions = TransactionTable.decode(doc.get("txns", []))
        except (cbor2.CBORDecodeError, KeyError, TypeError, ValueError) as exc:
            raise StoreError(f"unreadable producer-state snapshot: {exc}") from None
        return table


OnAborted = Callable[[int, AbortedTxn], None]


def load_producer_state(
    directory: Path,
    segments: Sequence[LogSegment],
    log_end_offset: int,
    on_aborted: OnAborted | None = None,
    use_snapshot: bool = True,
) -> ProducerStateTable:
    """The snapshot (if usable) plus every batch header after it, up to the log end.

    Transaction markers after the snapshot are read (one small control batch each) to
    replay the transactions they end; each abort is passed to ``on_aborted`` with the base
    offset of the segment holding its marker. ``table.end_offset`` after the snapshot is
    where that replay started (the caller's aborted index must hold nothing from there)."""
    path = directory / PRODUCER_STATE_FILE
    table = ProducerStateTable()
    try:
        if not use_snapshot:
            raise FileNotFoundError(path)  # replay every batch of the log
        loaded = ProducerStateTable.decode(path.read_bytes())
        if loaded.end_offset <= log_end_offset:
            table = loaded
    except FileNotFoundError:
        pass
    except (OSError, StoreError) as exc:
        log.warning("%s: %s; rebuilding it from the log", path, exc)
    table.replay_start = table.end_offset
    for segment, position, header in _headers_from(segments, table.end_offset):
        table.update(header, header.base_offset)
        if is_control(header):
            marker = _marker_at(segment, position, header)
            txns = table.transactions
            aborted = None if marker is None else txns.on_marker(marker, header.base_offset)
            if aborted is not None and on_aborted is not None:
                on_aborted(segment.base_offset, aborted)
        else:
            table.transactions.on_data(header, header.base_offset)
    return table


def _marker_at(segment: LogSegment, position: int, header: BatchHeader) -> Marker | None:
    """The marker of a control batch the log already validated; None (and a warning) when
    its record is not a marker Kafka's format describes."""
    try:
        return read_marker(disk_io.pread(segment.fd, header.size, position))
    except CorruptBatch as exc:
        log.warning("%s: control batch at %d: %s", segment.paths.log, header.base_offset, exc)
        return None


def _headers_from(
    segments: Sequence[LogSegment], offset: int
) -> Iterable[tuple[LogSegment, int, BatchHeader]]:
    for segment in segments:
        if segment.next_offset <= offset:
            continue
        start = segment.position_of(offset) if offset > segment.base_offset else 0
        for position, header in iter_headers(segment.fd, start, segment.size):
            if header.last_offset >= offset:
                yield segment, position, header


def write_producer_state(
    directory: Path, table: ProducerStateTable, batch: SyncBatch | None = None
) -> None:
    """Durable at once, or when ``batch`` commits."""
    write_atomically(directory / PRODUCER_STATE_FILE, table.encode(), batch=batch)
