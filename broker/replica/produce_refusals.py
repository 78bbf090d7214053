"""Gaps this node made itself: an idempotent batch refused, and the batches pipelined behind it.

A client pipelines batches of one partition on one connection (librdkafka up to 5, rillet's own
client too). When the node refuses batch R1 before appending it, for a reason that may be gone
a moment later (it is not the partition's leader *yet*, the ISR is below
``min.insync.replicas``), R2, read next on the same connection, is checked against a log that
lacks R1 and would get OUT_OF_ORDER_SEQUENCE. librdkafka answers that error on a batch that is
not its first unacknowledged one by bumping its producer epoch and renumbering every record it
has not seen acknowledged, including records whose earlier attempt *was* written (an acks=all
wait that ended with a changed leader): those are then written twice. The chaos runs through
Kafka clients found exactly that at a leader change.

The gap is this node's own doing, so R2 gets R1's answer (a retriable refusal): the client
retries both in order, and the producer state dedupes whatever an earlier attempt wrote.
Per connection, because one connection's requests are handled in order, so "behind R1" is
well defined; bounded, as everything a peer can make the node remember.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from rillet.partition_store.producer_state import last_sequence, sequence_after
from rillet.wire.batch import NO_PRODUCER_ID, peek_length, read_header
from rillet.wire.error_codes import ErrorCode
from rillet.wire.errors import CorruptBatch

# Refusals that say "not now": the client retries them, so the batches behind may wait too.
RETRIABLE_REFUSALS = frozenset(
    {
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.LEADER_NOT_AVAILABLE,
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.NOT_ENOUGH_REPLICAS,
        ErrorCode.STORAGE_ERROR,
    }
)
# Producers one connection's refusals are remembered for (a client sends for one producer;
# a proxy or a pooled connection for a few).
MAX_GAPS_PER_CONNECTION = 1024
# Batches one refusal answers: the most a client pipelines behind a batch (Kafka's limit of
# 5 in flight per partition) - a producer that keeps skipping is not explained forever.
MAX_BATCHES_BEHIND = 5


class BatchSpan(NamedTuple):
    """The idempotent producer and sequence range of one partition's record set."""

    producer_id: int
    producer_epoch: int
    first_sequence: int
    next_sequence: int


def span_of(records: object) -> BatchSpan | None:
    """The span of a record set of one idempotent producer; None for other record sets
    (not idempotent, several producers, unreadable, not bytes: the append path judges
    those)."""
    if not isinstance(records, bytes | bytearray | memoryview):
        return None
    try:
        first = read_header(records, 0)
        if first.producer_id == NO_PRODUCER_ID or first.base_sequence < 0:
            return None
        last, position, end = first, 0, len(records)
        while True:
            _, size = peek_length(records, position)
            if position + size >= end:
                break
            position += size
            last = read_header(records, position)
            if (last.producer_id, last.producer_epoch) != (first.producer_id, first.producer_epoch):
                return None
    except CorruptBatch:
        return None
    following = sequence_after(last_sequence(last))
    return BatchSpan(first.producer_id, first.producer_epoch, first.base_sequence, following)


@dataclass(slots=True)
class _Gap:
    producer_epoch: int
    next_sequence: int  # the sequence a batch behind the refused one starts at
    code: ErrorCode
    answered: int = 0  # batches behind it answered so far


class ProduceRefusals:
    """One connection's refused idempotent batches, per (topic, partition, producer id)."""

    def __init__(self, max_gaps: int = MAX_GAPS_PER_CONNECTION) -> None:
        self._max_gaps = max_gaps
        self._gaps: dict[tuple[str, int, int], _Gap] = {}

    def __len__(self) -> int:
        return len(self._gaps)

    def behind_refused(
        self, topic: str, partition: int, span: BatchSpan | None
    ) -> ErrorCode | None:
        """The refusal to repeat when ``span`` directly follows a batch this connection saw
        refused (or one answered so itself), else None (judge the batch as usual)."""
        if span is None:
            return None
        key = (topic, partition, span.producer_id)
        gap = self._gaps.get(key)
        if gap is None:
            return None
        if (
            gap.producer_epoch != span.producer_epoch
            or gap.next_sequence != span.first_sequence
            or gap.answered >= MAX_BATCHES_BEHIND
        ):
            del self._gaps[key]  # the producer moved on: retried, renumbered, or skipped
            return None
        gap.next_sequence = span.next_sequence
        gap.answered += 1
        return gap.code

    def refused(self, topic: str, partition: int, span: BatchSpan | None, code: ErrorCode) -> None:
        """The node refused ``span`` without writing it, answering ``code``."""
        if span is None or code not in RETRIABLE_REFUSALS:
            return
        key = (topic, partition, span.producer_id)
        if key not in self._gaps and len(self._gaps) >= self._max_gaps:
            del self._gaps[next(iter(self._gaps))]  # the oldest
        self._gaps[key] = _Gap(span.producer_epoch, span.next_sequence, code)

    def settled(self, topic: str, partition: int, span: BatchSpan | None) -> None:
        """``span`` was judged on its own (written, a duplicate, or refused for good)."""
        if span is not None:
            self._gaps.pop((topic, partition, span.producer_id), None)
