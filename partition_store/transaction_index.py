"""The aborted-transaction index: per segment, the transactions whose abort marker it holds.

Kafka's ``.txnindex``: a read_committed fetch must tell the consumer which producers' batches
in the range it returns were aborted, without the broker decoding anything. Each entry names
the producer, the transaction's first offset, its abort marker's offset and the partition's
last stable offset after the abort. The consumer drops a producer's batches from the entry's
first offset until it meets that producer's abort marker.

File format (``<base offset>.txnindex``, next to the segment): 34-byte entries, Kafka's
layout ``version int16 (0) | producer_id int64 | first_offset int64 | last_offset int64 |
last_stable_offset int64``. The file of a segment is written whole (atomically, fsynced)
when the segment is sealed (roll, clean close) and only if it has entries; the active
segment's entries live in memory and are rebuilt from the batches after the producer-state
snapshot when the log is opened. Like the other indexes it is derived data: an unreadable
file makes the log rebuild every entry from its batches.
"""

from __future__ import annotations

import bisect
import struct
from pathlib import Path

from rillet.partition_store.errors import CorruptLog
from rillet.partition_store.transaction_state import AbortedTxn
from rillet.wire import disk_io
from rillet.wire.atomic_file import SyncBatch, write_atomically

_ENTRY = struct.Struct(">hqqqq")
ENTRY_SIZE = _ENTRY.size  # 34
INDEX_VERSION = 0


def encode_entries(entries: list[AbortedTxn]) -> bytes:
    return b"".join(
        _ENTRY.pack(
            INDEX_VERSION, e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset
        )
        for e in entries
    )


def decode_entries(data: bytes, name: str) -> list[AbortedTxn]:
    """Raises CorruptLog when ``data`` is not whole version-0 entries."""
    if len(data) % ENTRY_SIZE:
        raise CorruptLog(f"{name}: {len(data)} bytes is not a whole number of entries")
    entries = []
    for version, pid, first, last, lso in _ENTRY.iter_unpack(data):
        if version != INDEX_VERSION or first > last:
            raise CorruptLog(f"{name}: an entry of version {version} for [{first}, {last}]")
        entries.append(AbortedTxn(pid, first, last, lso))
    return entries


class AbortedIndex:
    """Every segment's aborted transactions, by segment base offset (entries in marker
    order). One owner (the log) drives it; files are written only by :meth:`write`."""

    def __init__(self) -> None:
        self._bases: list[int] = []
        self._entries: dict[int, list[AbortedTxn]] = {}

    def add(self, segment_base: int, entry: AbortedTxn) -> None:
        if segment_base not in self._entries:
            bisect.insort(self._bases, segment_base)
            self._entries[segment_base] = []
        self._entries[segment_base].append(entry)

    def load(self, segment_base: int, path: Path) -> None:
        """Adopt a sealed segment's file (a missing file: no aborted transactions there)."""
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return
        for entry in decode_entries(data, path.name):
            self.add(segment_base, entry)

    def write(self, segment_base: int, path: Path, batch: SyncBatch | None = None) -> None:
        """Write the segment's file whole (none when it has no entries), durable at once or
        when ``batch`` commits."""
        entries = self._entries.get(segment_base)
        if entries:
            write_atomically(path, encode_entries(entries), batch=batch)
        else:
            disk_io.unlink_missing_ok(path)

    def collect(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """The aborted transactions overlapping ``[fetch_offset, upper_bound)``: marker at
        or after the fetch offset, first offset before the bound (what a read_committed
        fetch of that range returns, Kafka's ``collectAbortedTransactions``)."""
        out: list[AbortedTxn] = []
        for base in self._bases:
            for entry in self._entries[base]:
                if entry.last_offset >= fetch_offset and entry.first_offset < upper_bound:
                    out.append(entry)
        return out

    def truncate(self, end_offset: int) -> list[int]:
        """Forget entries whose marker is at or after ``end_offset``; returns the bases of
        the segments that changed (their files need writing again)."""
        changed = []
        for base in list(self._bases):
            entries = self._entries[base]
            kept = [e for e in entries if e.last_offset < end_offset]
            if len(kept) != len(entries):
                changed.append(base)
                if kept:
                    self._entries[base] = kept
                else:
                    self._drop(base)
        return changed

    def merge(self, into: int, bases: list[int]) -> None:
        """Segments ``bases`` became one segment at ``into`` (the log cleaner merged them):
        their entries, in marker order, are that segment's now."""
        merged = sorted(
            (e for b in bases for e in self._entries.get(b, ())), key=lambda e: e.last_offset
        )
        for base in bases:
            if base in self._entries:
                self._drop(base)
        for entry in merged:
            self.add(into, entry)

    def drop_segments_below(self, offset: int) -> None:
        """Segments starting below ``offset`` left the log (retention)."""
        while self._bases and self._bases[0] < offset:
            self._drop(self._bases[0])

    def entries(self, segment_base: int) -> list[AbortedTxn]:
        return list(self._entries.get(segment_base, ()))

    def _drop(self, base: int) -> None:
        self._bases.remove(base)
        del self._entries[base]
