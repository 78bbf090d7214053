"""Fetched records kept as decoded columns until ``poll`` hands them out.

One fetch of many partitions brings hundreds of thousands of records. Built at once as
ConsumerRecord tuples, they all stayed alive until the application took them, and Python's
cycle collector walked every one of them on each full pass: with 100 partitions it spent
0.85 s per million records (with the collector off, the consumer read 1.3 M records/s
instead of 0.6 M). Here a fetched partition keeps, per batch, the columns its records were
decoded into (offsets start, timestamps, keys, values, headers: lists of immutable values),
and :meth:`BufferedRecords.take` builds ConsumerRecords for the records ``poll`` returns,
at most ``max_poll_records`` at a time, so few record objects live at once.

A batch is decoded into its columns only when ``poll`` first reaches it (its CRC was
checked when it arrived). One fetch of 1,000 partitions brings about half a million
records: decoded at once, they held the consumer's event loop for a fifth of a second
before the first of them could be polled. A batch that fails to decode is raised by the
``take`` that reaches it, after the records before it have been handed out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Protocol

from rillet.client.errors import CorruptMessageError
from rillet.client.types import ConsumerRecord

# tuple.__new__ directly: a NamedTuple's own __new__ costs a Python frame per record.
_new = tuple.__new__
Headers = Sequence[tuple[str, bytes | None]]
# Records without headers share one immutable empty tuple: no list allocated per record.
NO_HEADERS: Headers = ()


@dataclass(slots=True)
class RecordColumns:
    """The records of one batch (from its ``first_offset`` on), column by column."""

    first_offset: int
    timestamps: Sequence[int]
    keys: Sequence[bytes | None]
    values: Sequence[bytes | None]
    headers: Sequence[Headers] | None  # None: no record of the batch has headers

    def __len__(self) -> int:
        return len(self.values)


class EncodedBatch(Protocol):
    """A fetched batch whose records are decoded when first taken."""

    first_offset: int  # of the first record to hand out

    def __len__(self) -> int:
        """Records to hand out (known from the batch's header before decoding)."""
        ...

    def decode(self) -> RecordColumns:
        """The records as columns, exactly ``len(self)`` of them; raises
        CorruptMessageError."""
        ...


class BufferedRecords:
    """One partition's fetched records not yet handed to the application."""

    __slots__ = ("_batches", "_index", "_read", "_remaining", "partition", "topic")

    def __init__(
        self, topic: str, partition: int, batches: list[RecordColumns | EncodedBatch]
    ) -> None:
        self.topic = topic
        self.partition = partition
        self._batches = batches
        self._index = 0  # the batch the next record is in
        self._read = 0  # records of that batch already taken
        self._remaining = sum(len(b) for b in batches)

    def __len__(self) -> int:
        return self._remaining

    def take(self, count: int) -> list[ConsumerRecord]:
        """The next ``count`` records (fewer when fewer remain), built now.

        A batch that fails to decode ends the records returned before it; with none
        before it, its CorruptMessageError is raised (and again by every later call).
        """
        out: list[ConsumerRecord] = []
        batches = self._batches
        while count > 0 and self._index < len(batches):
            encoded = batches[self._index]
            if isinstance(encoded, RecordColumns):
                batch = encoded
            else:
                try:
                    batch = batches[self._index] = encoded.decode()
                except CorruptMessageError:
                    if out:
                        return out
                    raise
            start = self._read
            end = min(len(batch), start + count)
            out += map(
                _new,
                repeat(ConsumerRecord),
                zip(
                    repeat(self.topic),
                    repeat(self.partition),
                    range(batch.first_offset + start, batch.first_offset + end),
                    batch.timestamps[start:end],
                    batch.keys[start:end],
                    batch.values[start:end],
                    repeat(NO_HEADERS) if batch.headers is None else batch.headers[start:end],
                ),
            )
            taken = end - start
            count -= taken
            self._remaining -= taken
            if end == len(batch):
                batches[self._index] = _TAKEN  # drop the batch's columns at once
                self._index += 1
                self._read = 0
            else:
                self._read = end
        return out


_TAKEN = RecordColumns(0, (), (), (), None)
EMPTY = BufferedRecords("", -1, [])
