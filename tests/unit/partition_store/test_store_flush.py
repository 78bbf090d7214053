"""Flush policy and the plan / run / complete protocol that keeps fsync off the event loop."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from store_batches import T0, batch, open_log

from rillet.partition_store.errors import StoreError


def test_needs_flush_by_message_count(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", flush_messages=3)
    assert not log.needs_flush(T0)
    log.append_as_leader(batch([b"a", b"b"]), 0, T0)
    assert not log.needs_flush(T0 + 10**9)  # flush_ms = -1: time alone never forces it
    log.append_as_leader(batch([b"c"]), 0, T0)
    assert log.needs_flush(T0)
    log.flush()
    assert log.recovery_point == 3 and not log.needs_flush(T0)


def test_needs_flush_by_age_of_the_oldest_unflushed_append(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", flush_ms=100)
    assert not log.needs_flush(T0 + 1000)  # nothing to flush
    log.append_as_leader(batch([b"a"]), 0, T0)
    log.append_as_leader(batch([b"b"]), 0, T0 + 80)
    assert not log.needs_flush(T0 + 99)
    assert log.needs_flush(T0 + 100)
    plan = log.flush_plan()
    assert plan is not None
    log.append_as_leader(batch([b"c"]), 0, T0 + 150)  # arrives while the plan runs
    plan.run()
    log.flush_completed(plan)
    assert log.recovery_point == 2
    assert not log.needs_flush(T0 + 249)  # the clock restarts at the first uncovered append
    assert log.needs_flush(T0 + 250)


def test_default_policy_flushes_only_rolled_segments(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", segment_bytes=1024)
    for _ in range(5):
        log.append_as_leader(batch([bytes(100)]), 0, T0)
    assert not log.needs_flush(T0 + 10**9)
    while len(log.segments()) == 1:
        log.append_as_leader(batch([bytes(100)]), 0, T0)
    assert log.needs_flush(T0)  # the sealed segment is due, like Kafka's flush on roll
    log.flush()
    assert log.recovery_point == log.log_end_offset
    log.append_as_leader(batch([bytes(100)]), 0, T0)
    assert not log.needs_flush(T0)


def test_plan_runs_on_another_thread_while_appends_continue(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = open_log(directory, flush_messages=1, segment_bytes=1024)
    for _ in range(20):
        log.append_as_leader(batch([bytes(100)]), 0, T0)
    plan = log.flush_plan()
    assert plan is not None and plan.up_to_offset == 20
    worker = threading.Thread(target=plan.run)
    worker.start()
    for _ in range(20):  # appends, rolls and retention while the fsync runs
        log.append_as_leader(batch([bytes(100)]), 0, T0)
    worker.join()
    assert log.recovery_point == 0  # nothing changes until the event loop adopts the plan
    log.flush_completed(plan)
    assert log.recovery_point == 20
    assert (directory / "recovery-point-checkpoint").read_text() == "20\n"
    assert not list(directory.glob("*.tmp"))
    with pytest.raises(StoreError):
        plan.run()  # a plan is spent once run


def test_completing_a_plan_before_it_ran_is_an_error(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(batch([b"a"]), 0, T0)
    plan = log.flush_plan()
    assert plan is not None
    with pytest.raises(StoreError):
        log.flush_completed(plan)
    plan.discard()
    assert log.flush_plan() is not None


def test_a_truncation_makes_a_running_plan_stale(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = open_log(directory)
    for _ in range(4):
        log.append_as_leader(batch([b"a"]), 0, T0)
    plan = log.flush_plan()
    assert plan is not None
    log.truncate_to(2)
    for _ in range(4):  # offsets 2.. are new, unflushed data now
        log.append_as_leader(batch([b"b"]), 0, T0)
    plan.run()
    log.flush_completed(plan)
    assert log.recovery_point == 0
    assert not list(directory.glob("*.tmp"))


def test_an_older_plan_completing_late_changes_nothing(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(batch([b"a"]), 0, T0)
    old = log.flush_plan()
    log.append_as_leader(batch([b"b"]), 0, T0)
    new = log.flush_plan()
    assert old is not None and new is not None
    new.run()
    log.flush_completed(new)
    old.run()
    log.flush_completed(old)
    assert log.recovery_point == 2


def test_nothing_to_flush_gives_no_plan(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    assert log.flush_plan() is None
    log.append_as_leader(batch([b"a"]), 0, T0)
    log.flush()
    assert log.flush_plan() is None


def test_close_flushes_and_reopen_trusts_the_recovery_point(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = open_log(directory)
    log.append_as_leader(batch([b"a"]), 0, T0)
    log.close()
    assert (directory / "recovery-point-checkpoint").read_text() == "1\n"
    again = open_log(directory)
    assert again.recovery_point == 1 and not again.needs_flush(T0)


def test_a_plan_survives_its_directory_being_renamed_and_the_log_closed(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = open_log(directory)
    log.append_as_leader(batch([b"a"]), 0, T0)
    plan = log.flush_plan()
    assert plan is not None
    log.close()  # topic deletion: close, then rename the directory for background removal
    moved = directory.rename(tmp_path / "t-0.x-delete")
    plan.run()
    log.flush_completed(plan)  # closed: a no-op
    assert (moved / "recovery-point-checkpoint").read_text() == "1\n"


def test_a_plan_outliving_a_deleted_partition_is_harmless(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(batch([b"a"]), 0, T0)
    plan = log.flush_plan()
    assert plan is not None
    log.delete()
    plan.run()
    log.flush_completed(plan)
    assert not (tmp_path / "t-0").exists()
