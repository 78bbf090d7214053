"""Rewriting record batches for the log cleaner: bytes in, bytes out, offsets preserved.

Each input batch is judged record by record (``compaction_plan.keep_record``):

- a batch that keeps every record and needs no delete horizon is copied byte for byte;
- otherwise each run of consecutive kept records becomes a batch of its own, with the
  offset of its first record as base offset, the original leader epoch, producer id and
  epoch (the base sequence moved along), compression codec and attributes; its records are
  re-encoded with offset deltas 0, 1, ... so every batch still holds consecutive offsets;
- each run of dropped offsets becomes an *empty batch*: a bare 61-byte header with
  ``record_count`` 0 whose ``last_offset_delta`` spans the run (as Kafka's cleaner leaves
  empty batches). Consecutive runs of one leader epoch share one empty batch, so a long
  overwritten stretch costs 61 bytes. The log therefore stays one gap-free chain of
  batches (recovery, replication and the indexes need nothing new), while consumers see
  the dropped offsets as gaps: an empty batch yields no records and moves the fetch
  position past it.

Batches of transactions (transactional or control) are copied unchanged for now: the rules
for markers and aborted records plug in at :func:`copied_unchanged`. So is a batch whose
records cannot be decoded (a codec this node lacks): nothing is ever lost by cleaning.

Deterministic: the same batches, map and times give the same bytes on every replica.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from rillet.partition_store.compaction_plan import NO_HORIZON, keep_record
from rillet.wire.batch import (
    ATTR_CONTROL,
    ATTR_DELETE_HORIZON,
    ATTR_TIMESTAMP_LOG_APPEND,
    ATTR_TRANSACTIONAL,
    HEADER_SIZE,
    BatchHeader,
    encode_batch_from_payload,
    read_header,
)
from rillet.wire.compression import Compression, compress, decompress
from rillet.wire.errors import WireError
from rillet.wire.record_codec import DecodedHeaders, RecordColumns, encode_record
from rillet.wire.record_codec import decode_records as decode_record_fields

SEQUENCE_MODULUS = 1 << 31  # Kafka's sequences wrap at Int.MaxValue


@dataclass(slots=True)
class _Gap:
    """A run of dropped offsets not yet written as an empty batch."""

    base_offset: int
    next_offset: int
    leader_epoch: int
    max_timestamp_ms: int

    def encode(self) -> bytes:
        return encode_batch_from_payload(
            b"",
            record_count=0,
            first_timestamp_ms=self.max_timestamp_ms,
            max_timestamp_ms=self.max_timestamp_ms,
            base_offset=self.base_offset,
            leader_epoch=self.leader_epoch,
            last_offset_delta=self.next_offset - self.base_offset - 1,
        )


@dataclass(slots=True)
class CleaningStats:
    batches_in: int = 0
    batches_out: int = 0
    records_dropped: int = 0
    tombstones_dropped: int = 0


def copied_unchanged(header: BatchHeader) -> bool:
    """Batches the cleaner never rewrites. Transactions hook: Kafka's rules (drop aborted
    records and markers whose transaction is fully cleaned) replace this test."""
    return bool(header.attributes & (ATTR_TRANSACTIONAL | ATTR_CONTROL))


class BatchCleaner:
    """Cleans the batches of one group, in log order (gaps merge across batches)."""

    def __init__(self, latest_offsets: dict[bytes, int], now_ms: int, new_horizon_ms: int):
        self._latest = latest_offsets
        self._now_ms = now_ms
        self._new_horizon_ms = new_horizon_ms
        self._gap: _Gap | None = None
        self.stats = CleaningStats()

    def clean(self, batches: Iterable[bytes]) -> Iterator[bytes]:
        """The cleaned bytes for ``batches`` (each one whole batch, CRC-checked by the
        caller); call :meth:`finish` after the last."""
        for raw in batches:
            self.stats.batches_in += 1
            yield from self._clean_one(raw)

    def finish(self) -> Iterator[bytes]:
        yield from self._flush_gap()

    def _clean_one(self, raw: bytes) -> Iterator[bytes]:
        header = read_header(raw)
        if header.record_count == 0:  # an empty batch from an earlier clean: a gap
            yield from self._drop(header.base_offset, header.next_offset, header, -1)
            return
        rows = None if copied_unchanged(header) else _decode(raw, header)
        if rows is None:
            yield from self._emit(raw)
            return
        horizon = header.first_timestamp_ms if header.attributes & ATTR_DELETE_HORIZON else -1
        base, latest, now = header.base_offset, self._latest, self._now_ms
        keep = [
            keep_record(key, base + i, value is None, latest, horizon, now)
            for i, (key, value) in enumerate(zip(rows.keys, rows.values, strict=True))
        ]
        stamp = horizon == NO_HORIZON and any(
            k and key is not None and value is None
            for k, key, value in zip(keep, rows.keys, rows.values, strict=True)
        )
        if all(keep) and not stamp:
            yield from self._emit(raw)
            return
        i = 0
        while i < len(keep):
            j = i
            while j < len(keep) and keep[j] == keep[i]:
                j += 1
            if keep[i]:
                yield from self._emit(self._rebuild(header, rows, i, j, horizon))
            else:
                self.stats.records_dropped += j - i
                self.stats.tombstones_dropped += sum(v is None for v in rows.values[i:j])
                max_ts = max(rows.timestamps_ms[i:j])
                yield from self._drop(base + i, base + j, header, max_ts)
            i = j

    def _rebuild(
        self, header: BatchHeader, rows: _Rows, start: int, end: int, horizon_ms: int
    ) -> bytes:
        """One batch of the consecutive kept records ``start..end`` of a batch, named by the
        first one's offset."""
        keys, values = rows.keys[start:end], rows.values[start:end]
        headers = rows.headers[start:end] if rows.headers else [None] * (end - start)
        timestamps = rows.timestamps_ms[start:end]
        has_tombstone = any(v is None and k is not None for k, v in zip(keys, values, strict=True))
        if has_tombstone and horizon_ms == NO_HORIZON:
            horizon_ms = self._new_horizon_ms
        attributes = header.attributes & ~ATTR_DELETE_HORIZON
        if has_tombstone:
            attributes |= ATTR_DELETE_HORIZON
        if header.attributes & ATTR_TIMESTAMP_LOG_APPEND:  # records report the max timestamp
            first_ts = max_ts = header.max_timestamp_ms
            deltas = [0] * len(keys)
        else:
            first_ts, max_ts = timestamps[0], max(timestamps)
            deltas = [t - first_ts for t in timestamps]
        if has_tombstone:  # KIP-534: the horizon is the base the deltas count from
            deltas = [d + first_ts - horizon_ms for d in deltas]
            first_ts = horizon_ms
        payload = b"".join(
            encode_record(i, delta, key, value, hs or None)
            for i, (delta, key, value, hs) in enumerate(
                zip(deltas, keys, values, headers, strict=True)
            )
        )
        sequence = header.base_sequence
        if sequence >= 0:
            sequence = (sequence + start) % SEQUENCE_MODULUS
        return encode_batch_from_payload(
            compress(Compression(header.compression), payload),
            record_count=len(keys),
            first_timestamp_ms=first_ts,
            max_timestamp_ms=max_ts,
            attributes=attributes,
            producer_id=header.producer_id,
            producer_epoch=header.producer_epoch,
            base_sequence=sequence,
            base_offset=header.base_offset + start,
            leader_epoch=header.leader_epoch,
        )

    def _drop(self, base: int, end: int, header: BatchHeader, max_ts: int) -> Iterator[bytes]:
        if max_ts < 0:
            max_ts = header.max_timestamp_ms
        gap = self._gap
        if gap is not None and gap.next_offset == base and gap.leader_epoch == header.leader_epoch:
            gap.next_offset = end
            gap.max_timestamp_ms = max(gap.max_timestamp_ms, max_ts)
            return
        yield from self._flush_gap()
        self._gap = _Gap(base, end, header.leader_epoch, max_ts)

    def _emit(self, data: bytes) -> Iterator[bytes]:
        yield from self._flush_gap()
        self.stats.batches_out += 1
        yield data

    def _flush_gap(self) -> Iterator[bytes]:
        if self._gap is not None:
            gap, self._gap = self._gap, None
            self.stats.batches_out += 1
            yield gap.encode()


@dataclass(frozen=True, slots=True)
class _Rows:
    """A batch's decoded records as columns (index i is offset ``base_offset + i``)."""

    timestamps_ms: list[int]
    keys: list[bytes | None]
    values: list[bytes | None]
    headers: list[DecodedHeaders | None] | None


def _columns(raw: bytes, header: BatchHeader) -> RecordColumns | None:
    try:
        payload = decompress(header.compression, memoryview(raw)[HEADER_SIZE:])
        return decode_record_fields(payload, header.record_count)
    except (WireError, ValueError):
        return None


def _decode(raw: bytes, header: BatchHeader) -> _Rows | None:
    columns = _columns(raw, header)
    if columns is None:
        return None
    if header.attributes & ATTR_TIMESTAMP_LOG_APPEND:
        timestamps = [header.max_timestamp_ms] * header.record_count
    else:
        first = header.first_timestamp_ms
        timestamps = [first + d for d in columns.timestamp_deltas_ms]
    return _Rows(timestamps, columns.keys, columns.values, columns.headers)


def batch_keys(raw: bytes) -> list[tuple[bytes, int]] | None:
    """``(key, offset)`` of every keyed record of a batch the cleaner may rewrite (for the
    key map); None for a batch it copies unchanged."""
    header = read_header(raw)
    if header.record_count == 0 or copied_unchanged(header):
        return None
    columns = _columns(raw, header)
    if columns is None:
        return None
    base = header.base_offset
    return [(key, base + i) for i, key in enumerate(columns.keys) if key is not None]
