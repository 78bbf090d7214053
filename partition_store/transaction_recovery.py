"""Opening a log's transaction state: open transactions and the aborted-transaction index.

Both come from files written at the last roll or clean close (the producer-state snapshot,
the sealed segments' ``.txnindex`` files) plus a replay of the batches after the snapshot.
Index entries at or after the replay's start are dropped before the replay adds them back,
so an entry is never counted twice. An unreadable ``.txnindex`` (derived data, like the
offset indexes) makes the whole state be rebuilt from every batch of the log.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from rillet.partition_store.errors import CorruptLog
from rillet.partition_store.producer_state import ProducerStateTable, load_producer_state
from rillet.partition_store.segment import LogSegment
from rillet.partition_store.transaction_index import AbortedIndex
from rillet.partition_store.transaction_state import AbortedTxn

log = logging.getLogger(__name__)


def load_transaction_state(
    directory: Path, segments: Sequence[LogSegment], log_end_offset: int
) -> tuple[ProducerStateTable, AbortedIndex]:
    """The producer table (with its open transactions) and the aborted index of a log
    being opened; rewrites the ``.txnindex`` of sealed segments the replay covered."""
    index = AbortedIndex()
    rebuild = False
    for segment in segments:
        try:
            index.load(segment.base_offset, segment.paths.txn_index)
        except (CorruptLog, OSError) as exc:
            log.warning("%s; rebuilding the transaction state from the log", exc)
            rebuild = True
            break
    if rebuild:
        index = AbortedIndex()
    replayed: list[tuple[int, AbortedTxn]] = []
    table = load_producer_state(
        directory,
        segments,
        log_end_offset,
        on_aborted=lambda base, entry: replayed.append((base, entry)),
        use_snapshot=not rebuild,
    )
    index.truncate(table.replay_start)
    for base, entry in replayed:
        index.add(base, entry)
    for segment in segments[:-1]:
        if segment.next_offset > table.replay_start:
            index.write(segment.base_offset, segment.paths.txn_index)
    return table, index
