"""Transactions in one partition: open transactions, markers, the LSO, the aborted index."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_batches import T0, batch, crash, open_log, txn_batch

from rillet.partition_store.cleaning_pass import clean_now
from rillet.partition_store.config import LogConfig
from rillet.partition_store.log import PartitionLog
from rillet.partition_store.producer_state import InvalidProducerEpoch
from rillet.partition_store.transaction_index import ENTRY_SIZE
from rillet.partition_store.transaction_state import AbortedTxn
from rillet.wire.batch import build_batch, iter_batches, read_header
from rillet.wire.control_batch import ControlType, Marker, is_control, read_marker

P1, P2 = 1000, 2000


def commit(pid: int, epoch: int = 0) -> Marker:
    return Marker(pid, epoch, ControlType.COMMIT, 3)


def abort(pid: int, epoch: int = 0) -> Marker:
    return Marker(pid, epoch, ControlType.ABORT, 3)


def interleaved(log: PartitionLog) -> None:
    """P1 writes 0-1 and aborts at 4; P2 writes 2-3, then 5 after P1's abort, commits at 6;
    a plain batch at 7; P1 opens a new transaction at 8 (left open)."""
    log.append_as_leader(txn_batch(P1, 0, 0, [b"a1", b"a2"]), 0, T0)
    log.append_as_leader(txn_batch(P2, 0, 0, [b"b1", b"b2"]), 0, T0)
    log.append_marker_as_leader(abort(P1), 0, T0)
    log.append_as_leader(txn_batch(P2, 0, 2, [b"b3"]), 0, T0)
    log.append_marker_as_leader(commit(P2), 0, T0)
    log.append_as_leader(batch([b"plain"]), 0, T0)
    log.append_as_leader(txn_batch(P1, 0, 2, [b"a3"]), 0, T0)


def state(log: PartitionLog) -> tuple[object, ...]:
    return (
        log.log_end_offset,
        log.open_transactions(),
        log.last_stable_offset(log.log_end_offset),
        log.aborted_transactions(0, log.log_end_offset),
    )


EXPECTED = (9, {P1: 8}, 8, [AbortedTxn(P1, 0, 4, 2)])


def test_markers_end_transactions_and_the_lso_follows_the_earliest_open_one(
    tmp_path: Path,
) -> None:
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(txn_batch(P1, 0, 0, [b"a1", b"a2"]), 0, T0)
    assert log.first_unstable_offset() == 0
    assert log.last_stable_offset(2) == 0
    log.append_as_leader(txn_batch(P2, 0, 0, [b"b1"]), 0, T0)
    log.append_marker_as_leader(commit(P1), 0, T0)
    assert log.last_stable_offset(4) == 2  # P2's transaction still holds it back
    log.append_marker_as_leader(abort(P2), 0, T0)
    assert log.first_unstable_offset() is None
    assert log.last_stable_offset(5) == 5  # nothing open: the LSO is the high watermark
    assert log.last_stable_offset(3) == 3  # never above the high watermark
    assert log.aborted_transactions(0, 5) == [AbortedTxn(P2, 2, 4, 5)]


def test_markers_are_kafka_control_batches(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(txn_batch(P1, 4, 0, [b"x"]), 0, T0)
    log.append_marker_as_leader(Marker(P1, 4, ControlType.COMMIT, 17), 0, T0)
    data = log.read_bytes(1, 1 << 20)
    header = read_header(data)
    assert (header.base_offset, header.producer_id, header.producer_epoch) == (1, P1, 4)
    assert is_control(header) and header.base_sequence == -1 and header.record_count == 1
    assert read_marker(data) == Marker(P1, 4, ControlType.COMMIT, 17)


def test_aborted_transactions_overlapping_a_fetch_range(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    interleaved(log)
    assert state(log) == EXPECTED
    assert log.aborted_transactions(5, 9) == []  # the abort marker lies before the range
    assert log.aborted_transactions(4, 9) == [AbortedTxn(P1, 0, 4, 2)]
    assert log.aborted_transactions(0, 0) == []  # the range ends before the transaction


def test_a_follower_copying_the_leader_has_the_same_transactions(tmp_path: Path) -> None:
    leader = open_log(tmp_path / "l")
    interleaved(leader)
    follower = open_log(tmp_path / "f")
    follower.append_as_follower(leader.read_bytes(0, 1 << 20, max_offset=9), T0)
    assert state(follower) == EXPECTED


@pytest.mark.parametrize("how", ["clean", "crash"])
def test_transaction_state_survives_a_restart(tmp_path: Path, how: str) -> None:
    log = open_log(tmp_path / "t-0", segment_bytes=200)  # a few segments
    interleaved(log)
    assert len(log.segments()) > 2
    if how == "clean":
        log.close()
    else:
        crash(log)
    assert state(open_log(tmp_path / "t-0", segment_bytes=200)) == EXPECTED


def test_the_aborted_index_is_kafkas_txnindex_per_sealed_segment(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", segment_bytes=62)  # every append rolls
    interleaved(log)
    files = sorted(p.name for p in (tmp_path / "t-0").glob("*.txnindex"))
    assert files == [f"{4:020d}.txnindex"]  # only the segment holding the abort marker
    assert (tmp_path / "t-0" / files[0]).stat().st_size == ENTRY_SIZE


def test_a_damaged_txnindex_is_rebuilt_from_the_log(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", segment_bytes=62)
    interleaved(log)
    log.close()
    (tmp_path / "t-0" / f"{4:020d}.txnindex").write_bytes(b"\x00" * 7)
    assert state(open_log(tmp_path / "t-0", segment_bytes=62)) == EXPECTED


def test_cutting_a_marker_off_reopens_its_transaction(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    interleaved(log)
    log.truncate_to(4)  # P1's abort marker and everything after it
    assert log.open_transactions() == {P1: 0, P2: 2}
    assert log.aborted_transactions(0, 4) == []
    log.truncate_to(2)
    assert log.open_transactions() == {P1: 0}


def test_retention_drops_the_aborted_entries_of_deleted_segments(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", segment_bytes=62, retention_bytes=1)
    interleaved(log)
    log.delete_expired_segments(T0)
    assert log.aborted_transactions(0, log.log_end_offset) == []


def test_a_marker_of_an_older_producer_epoch_is_refused(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(txn_batch(P1, 5, 0, [b"x"]), 0, T0)
    with pytest.raises(InvalidProducerEpoch):
        log.append_marker_as_leader(abort(P1, epoch=4), 0, T0)
    assert log.open_transactions() == {P1: 0}
    log.append_marker_as_leader(abort(P1, epoch=5), 0, T0)
    assert log.open_transactions() == {}


def test_a_transactional_batch_that_would_open_a_transaction_is_flagged(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    first = txn_batch(P1, 0, 0, [b"x"])
    assert log.starts_transaction(read_header(first))
    log.append_as_leader(first, 0, T0)
    assert not log.starts_transaction(read_header(txn_batch(P1, 0, 1, [b"y"])))


def test_control_batches_are_stored_once_each(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    interleaved(log)
    data = log.read_bytes(0, 1 << 20)
    controls = [v.header.base_offset for v in iter_batches(data, 1 << 20) if is_control(v.header)]
    assert controls == [4, 6]


def test_cleaning_a_compacted_log_keeps_its_aborted_transactions(tmp_path: Path) -> None:
    config = LogConfig(segment_bytes=200, cleanup_policy="compact")
    log = PartitionLog.open(tmp_path / "t-0", config, T0, "t", 0)
    for round_ in range(3):  # keyed plain batches around an aborted transaction
        log.append_as_leader(build_batch([(T0, b"k", b"%d" % round_, None)]), 0, T0)
        log.append_as_leader(txn_batch(P1, 0, round_, [b"x"]), 0, T0)
        log.append_marker_as_leader(abort(P1), 0, T0)
    log.append_as_leader(batch([b"tail"]), 0, T0)
    before = log.aborted_transactions(0, log.log_end_offset)
    assert len(before) == 3 and len(log.segments()) > 2
    assert clean_now(log, T0 + 1000, last_stable_offset=log.log_end_offset) is not None
    assert log.aborted_transactions(0, log.log_end_offset) == before
    log.close()
    reopened = PartitionLog.open(tmp_path / "t-0", config, T0, "t", 0)
    assert reopened.aborted_transactions(0, reopened.log_end_offset) == before
