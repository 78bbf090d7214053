"""The failed-login backoff table, with time passed in: delays double per failure up to
the cap and reset on success, checks of a key in backoff are spaced (parallel connections
wait in turn), an attempt too far in the queue is refused, quiet keys are forgotten and
the table is bounded."""

from __future__ import annotations

import pytest

from rillet.broker.security.sasl.backoff import FailureBackoff

ADDRESS = ("address", "10.0.0.1")
ALICE = ("user", "alice")


def test_each_failure_doubles_the_delay_up_to_the_cap_and_a_success_resets_it() -> None:
    table = FailureBackoff(0.1, 1.0, 100)
    delays = []
    now = 0.0
    for _ in range(6):
        assert table.admit([ADDRESS, ALICE], now) == 0.0  # checked after each answer
        delay = table.failed([ADDRESS, ALICE], now)
        delays.append(delay)
        now += delay
    assert delays == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.0, 1.0])
    assert table.delay_s([ALICE], now) == pytest.approx(1.0)
    table.succeeded([ADDRESS, ALICE])
    assert table.delay_s([ADDRESS, ALICE], now) == 0.0
    assert table.failed([ADDRESS, ALICE], now) == pytest.approx(0.1)


def test_the_worst_key_decides_so_a_new_user_from_a_guessing_address_waits_too() -> None:
    table = FailureBackoff(0.1, 5.0, 100)
    for i in range(3):
        table.failed([ADDRESS, ("user", f"u{i}")], 0.0)
    assert table.delay_s([ADDRESS, ("user", "bob")], 0.0) == pytest.approx(0.4)
    assert table.delay_s([("address", "10.0.0.2"), ("user", "bob")], 0.0) == 0.0


def test_parallel_attempts_of_a_key_in_backoff_are_spaced_then_refused() -> None:
    table = FailureBackoff(0.1, 1.0, 100)
    table.failed([ALICE], 0.0)  # next check of alice not before 0.1
    waits = [table.admit([ALICE], 0.0) for _ in range(12)]
    # Each admitted check reserves the next slot one delay (0.1 s) later, until the wait
    # would pass the cap: those attempts are refused without a check.
    assert waits[:10] == pytest.approx([0.1 * (i + 1) for i in range(10)])
    assert waits[10:] == [None, None]
    assert table.admit([("user", "bob")], 0.0) == 0.0  # other keys are not held up


def test_quiet_keys_are_forgotten_and_the_table_is_bounded() -> None:
    table = FailureBackoff(0.1, 1.0, 3)
    table.failed([ALICE], 0.0)
    assert table.delay_s([ALICE], 0.5) == pytest.approx(0.1)
    assert table.delay_s([ALICE], 1.1) == 0.0  # quiet for the cap after its slot
    assert len(table) == 0
    for i in range(10):
        table.failed([("user", f"invented-{i}")], float(i) / 100)
    assert len(table) == 3  # the least recently failed went first
    assert table.delay_s([("user", "invented-9")], 0.1) > 0
    assert table.delay_s([("user", "invented-0")], 0.1) == 0.0


def test_a_zero_first_delay_turns_backoff_off_and_bad_bounds_are_refused() -> None:
    table = FailureBackoff(0.0, 0.0, 10)
    assert table.failed([ALICE], 0.0) == 0.0
    assert table.admit([ALICE], 0.0) == 0.0
    with pytest.raises(ValueError):
        FailureBackoff(0.2, 0.1, 10)
