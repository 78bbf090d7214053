"""An idempotent producer's identity and per-partition sequence numbers.

With idempotence (the default with acks=all) every batch carries the producer id, its epoch
and the sequence number of its first record in that partition. Numbers are given when a
batch is first sent and never change, so a retry is recognised by the leader (which keeps
each producer's last five batches per partition) and answered with the original offsets
instead of being written twice — also when the retry reaches a new leader after a failover.

A batch that finally fails leaves its partition's sequence in doubt (the leader may or may
not have written it): the producer then asks for a new producer id and numbers from 0 again,
as Kafka's idempotent producer does when it resets its producer id.

A partition leader that does not know a producer yet (its first batch there, or a new
leader that never saw one of its batches) accepts any sequence, so there a second batch in
flight could be written before a first one that fails retriably. Several batches of a
partition go in flight only once its current leader has acknowledged a batch of the current
producer id (:meth:`IdempotenceState.confirmed_by`); until then one at a time.
"""

from __future__ import annotations

from rillet.client.accumulator import TP, ProducerBatch

NO_PRODUCER_ID = -1
SEQUENCE_MODULUS = 1 << 31


class IdempotenceState:
    def __init__(self, transactional: bool = False) -> None:
        # A transactional producer's id and epoch come from its transaction coordinator
        # (transactions.py), never from the sender, and its batches carry bit 4.
        self.transactional = transactional
        self.producer_id = NO_PRODUCER_ID
        self.producer_epoch = -1
        self.requesting = False
        self._next_sequence: dict[TP, int] = {}
        # Per partition, the leader that acknowledged a batch of this producer id.
        self._confirmed: dict[TP, int] = {}
        # Per partition, the (producer id, first sequence) of the batch numbered last; kept
        # across producer id changes (numbered_after).
        self._last_numbered: dict[TP, tuple[int, int]] = {}

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id != NO_PRODUCER_ID

    def assign(self, producer_id: int, producer_epoch: int) -> None:
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self._next_sequence.clear()
        self._confirmed.clear()

    def reset(self) -> None:
        self.producer_id = NO_PRODUCER_ID
        self.producer_epoch = -1
        self._next_sequence.clear()
        self._confirmed.clear()

    def confirm(self, batch: ProducerBatch, leader: int) -> None:
        """``leader`` acknowledged ``batch``: if it carries the current producer id, that
        leader knows this producer in the batch's partition (it checks sequences there)."""
        if batch.builder.producer_id == self.producer_id and self.has_producer_id:
            self._confirmed[(batch.topic, batch.partition)] = leader

    def confirmed_by(self, tp: TP) -> int | None:
        """The leader known to check this producer's sequences in ``tp``, if any."""
        return self._confirmed.get(tp)

    def numbered_after(self, batch: ProducerBatch) -> bool:
        """A batch of ``batch``'s partition was numbered after it. If ``batch`` was written,
        the leader may then have moved past it (it keeps a producer's last 5 batches), so
        an OUT_OF_ORDER_SEQUENCE for it no longer proves it is missing."""
        builder = batch.builder
        last = self._last_numbered.get((batch.topic, batch.partition))
        return last != (builder.producer_id, builder.base_sequence)

    def stamp(self, batch: ProducerBatch) -> None:
        """Number a batch on its first send; a retry keeps the numbers it was sent with,
        unless it was refused as out of sequence under a producer id since replaced
        (``batch.restamp``: never written, so numbering it anew cannot duplicate it)."""
        if not self.has_producer_id or (batch.encoded is not None and not batch.restamp):
            return
        batch.restamp = False
        batch.encoded = None
        tp = (batch.topic, batch.partition)
        sequence = self._next_sequence.get(tp, 0)
        builder = batch.builder
        builder.producer_id = self.producer_id
        builder.producer_epoch = self.producer_epoch
        builder.base_sequence = sequence
        builder.transactional = self.transactional
        self._last_numbered[tp] = (self.producer_id, sequence)
        self._next_sequence[tp] = (sequence + batch.count) % SEQUENCE_MODULUS
