"""read_committed decoding: aborted transactions' batches and every marker are left out,
committed and non-transactional records kept, without sockets."""

from __future__ import annotations

from rillet.client.fetch_decoder import decode_record_columns
from rillet.wire.batch import BatchBuilder, assign_offset_and_epoch
from rillet.wire.control_batch import ControlType, Marker, encode_marker
from rillet.wire.messages import AbortedTransaction

ABORTER, COMMITTER = 11, 12


def batch(offset: int, values: list[bytes], producer_id: int = -1, txn: bool = True) -> bytes:
    builder = BatchBuilder(
        producer_id=producer_id, producer_epoch=0, base_sequence=0, transactional=txn
    )
    for v in values:
        builder.append(1_000, None, v)
    raw = bytearray(builder.build())
    assign_offset_and_epoch(raw, 0, offset, 0)
    return bytes(raw)


def marker(offset: int, producer_id: int, kind: ControlType) -> bytes:
    raw = bytearray(encode_marker(Marker(producer_id, 0, kind, 0), 1_000))
    assign_offset_and_epoch(raw, 0, offset, 0)
    return bytes(raw)


LOG = b"".join(
    [
        batch(0, [b"aborted-0", b"aborted-1"], ABORTER),
        batch(2, [b"committed-2"], COMMITTER),
        marker(3, ABORTER, ControlType.ABORT),
        marker(4, COMMITTER, ControlType.COMMIT),
        batch(5, [b"next-txn-5"], ABORTER),  # the aborter's next transaction: not aborted
        batch(6, [b"plain-6"], txn=False),
    ]
)


def values(aborted: list[AbortedTransaction] | None, fetch_offset: int = 0) -> list[bytes]:
    records, next_offset = decode_record_columns(LOG, "t", 0, fetch_offset, True, aborted)
    assert next_offset == 7
    return [r.value for r in records.take(100) if r.value is not None]


def test_read_committed_drops_the_aborted_transaction_and_the_markers() -> None:
    assert values([AbortedTransaction(ABORTER, 0)]) == [b"committed-2", b"next-txn-5", b"plain-6"]


def test_read_uncommitted_keeps_every_data_record() -> None:
    assert values(None) == [
        b"aborted-0",
        b"aborted-1",
        b"committed-2",
        b"next-txn-5",
        b"plain-6",
    ]


def test_an_abort_starting_before_the_fetch_offset_still_drops_its_batches() -> None:
    assert values([AbortedTransaction(ABORTER, 0)], fetch_offset=1) == [
        b"committed-2",
        b"next-txn-5",
        b"plain-6",
    ]


def test_read_committed_with_no_aborted_transaction_keeps_all_data() -> None:
    assert len(values([])) == 5
