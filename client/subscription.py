"""The consumer's per-partition state: assignment, positions, pending resets, buffered records.

Two offsets per partition: ``position`` is the next offset the application will receive,
``fetch_offset`` the next offset to fetch (ahead of the position while fetched records wait
in the buffer). Every seek bumps the partition's ``epoch``; a fetch or lookup started under an
older epoch is dropped when it completes, so a seek is never undone by a response in flight.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from rillet.client.buffered_records import EMPTY as NO_RECORDS
from rillet.client.buffered_records import BufferedRecords
from rillet.client.errors import CorruptMessageError, RilletError
from rillet.client.types import ConsumerRecord, TopicPartition


class PartitionState:
    __slots__ = (
        "epoch",
        "fetch_offset",
        "high_watermark",
        "in_flight",
        "log_start_offset",
        "paused",
        "pending",
        "position",
        "queued",
        "reset_to",
        "retry_at_s",
    )

    def __init__(self) -> None:
        self.position: int | None = None
        self.fetch_offset: int | None = None
        self.reset_to: int | None = None  # EARLIEST/LATEST timestamp of a pending reset
        # Fetched records not handed to the application yet (built as they are taken).
        self.pending: BufferedRecords = NO_RECORDS
        self.epoch = 0
        self.in_flight = False
        self.retry_at_s = 0.0
        self.high_watermark = -1
        self.log_start_offset = -1
        # Held back from the application (a group member giving the partition up): take()
        # skips it and nothing more is fetched, so its position stays where it is.
        self.paused = False
        # In the subscription's queue of partitions with records for poll (at most once).
        self.queued = False

    @property
    def buffered(self) -> int:
        return len(self.pending)

    def set_position(self, offset: int) -> None:
        """Move to ``offset``: buffered records are dropped, fetches in flight ignored."""
        self.position = self.fetch_offset = offset
        self.reset_to = None
        self.pending = NO_RECORDS
        self.epoch += 1

    def request_reset(self, timestamp: int) -> None:
        """Move to the earliest (-2) or latest (-1) offset, looked up later."""
        self.position = self.fetch_offset = None
        self.reset_to = timestamp
        self.pending = NO_RECORDS
        self.epoch += 1


class Subscription:
    """Manually assigned partitions and their states."""

    def __init__(self) -> None:
        self.states: dict[TopicPartition, PartitionState] = {}
        # Partitions that may hold records for poll, in turn order. A poll looks only at
        # these: scanning every assigned partition per poll cost a consumer of 1,000
        # partitions a tenth of its CPU. Entries go stale (a seek dropped the records, the
        # partition was unassigned) and are dropped when their turn comes.
        self._ready: deque[tuple[TopicPartition, PartitionState]] = deque()

    def assign(self, partitions: Iterable[TopicPartition | tuple[str, int]]) -> None:
        """Replace the assignment; partitions kept keep their positions."""
        wanted = {TopicPartition(*tp) for tp in partitions}
        for tp in [tp for tp in self.states if tp not in wanted]:
            del self.states[tp]
        for tp in sorted(wanted):
            if tp not in self.states:
                self.states[tp] = PartitionState()

    def state(self, tp: TopicPartition | tuple[str, int]) -> PartitionState:
        state = self.states.get(TopicPartition(*tp))
        if state is None:
            raise RilletError(f"{tp[0]}-{tp[1]} is not assigned to this consumer")
        return state

    def resets_needed(self, default: int | None) -> dict[TopicPartition, int | None]:
        """Partitions without a position, and the timestamp to look their offset up at
        (None: no reset policy, the caller must raise)."""
        out: dict[TopicPartition, int | None] = {}
        for tp, s in self.states.items():
            if s.position is None:
                out[tp] = s.reset_to if s.reset_to is not None else default
        return out

    def buffer(self, tp: TopicPartition, state: PartitionState, records: BufferedRecords) -> None:
        """Keep fetched ``records`` of ``tp`` for poll (its state's previous ones were taken)."""
        state.pending = records
        if records and not state.queued:
            state.queued = True
            self._ready.append((tp, state))

    def take(self, max_records: int | None) -> list[ConsumerRecord]:
        """Hand buffered records to the application, advancing positions.

        Partitions take turns: one whose records do not all fit in this poll goes to the
        back of the queue, so with ``max_records`` no partition's backlog starves the
        others. Paused partitions keep their records and their place in the turns.

        A buffered batch that fails to decode is raised (CorruptMessageError) by the poll
        that reaches it with nothing taken yet; the partition is then fetched again from
        there.
        """
        out: list[ConsumerRecord] = []
        room = max_records if max_records is not None else 1 << 62
        ready = self._ready
        for _ in range(len(ready)):
            if room <= 0:
                break
            tp, s = ready.popleft()
            if not s.pending or self.states.get(tp) is not s:
                s.queued = False  # drained by a seek, or no longer assigned
                continue
            if s.paused:
                ready.append((tp, s))
                continue
            try:
                chunk = s.pending.take(room)
            except CorruptMessageError:
                if out:
                    ready.appendleft((tp, s))  # raised by the next poll, first thing
                    return out
                # Fetched again from here (the same error, until the application seeks).
                s.pending, s.queued, s.fetch_offset = NO_RECORDS, False, s.position
                raise
            out += chunk
            room -= len(chunk)
            s.position = chunk[-1].offset + 1
            if s.pending:
                ready.append((tp, s))  # the rest on its next turn
            else:
                s.pending = NO_RECORDS
                s.queued = False
                if s.fetch_offset is not None and s.fetch_offset > s.position:
                    # Batches after the last record were skipped (transaction markers,
                    # aborted transactions): the position moves past them, as Kafka's.
                    s.position = s.fetch_offset
        return out
