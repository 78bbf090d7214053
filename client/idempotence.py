"""An idempotent producer's identity and per-partition sequence numbers.

With idempotence (the default with acks=all) every batch carries the producer id, its epoch
and the sequence number of its first record in that partition. Numbers are given when a
batch is first sent and never change, so a retry is recognised by the leader (which keeps
each producer's last five batches per partition) and answered with the original offsets
instead of being written twice — also when the retry reaches a new leader after a failover.

A batch that finally fails leaves its partition's sequence in doubt (the leader may or may
not have written it): the producer then asks for a new producer id and numbers from 0 again,
as Kafka's idempotent producer does when it resets its producer id.
"""

from __future__ import annotations

from rillet.client.accumulator import TP, ProducerBatch

NO_PRODUCER_ID = -1
SEQUENCE_MODULUS = 1 << 31


class IdempotenceState:
    def __init__(self) -> None:
        self.producer_id = NO_PRODUCER_ID
        self.producer_epoch = -1
        self.requesting = False
        self._next_sequence: dict[TP, int] = {}

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id != NO_PRODUCER_ID

    def assign(self, producer_id: int, producer_epoch: int) -> None:
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self._next_sequence.clear()

    def reset(self) -> None:
        self.producer_id = NO_PRODUCER_ID
        self.producer_epoch = -1
        self._next_sequence.clear()

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
        self._next_sequence[tp] = (sequence + batch.count) % SEQUENCE_MODULUS
