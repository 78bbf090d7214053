"""The transactional checker on hand-made histories: a clean one passes, and each anomaly
Jepsen looks for is named when it is planted."""

from __future__ import annotations

from typing import Any

from rillet.chaos.txn_checker import check_txn_history, ctp_input, txn_of

IN, OUT = "in", "out"


def txn(
    name: str, writes: list[tuple[int, str]], outcome: str, t_end: float = 1.0
) -> dict[str, Any]:
    return {
        "type": "txn",
        "txn": name,
        "writes": [list(w) for w in writes],
        "outcome": outcome,
        "t_end": t_end,
    }


def final(
    topic: str, iso: str, records: list[tuple[int, int, str]], complete: bool = True
) -> dict[str, Any]:
    return {
        "type": "final",
        "topic": topic,
        "iso": iso,
        "complete": complete,
        "records": [list(r) for r in records],
    }


def reads(records: list[tuple[int, int, str]], t: float, iso: str = "committed") -> dict[str, Any]:
    return {
        "type": "reads",
        "reader": "r",
        "iso": iso,
        "topic": IN,
        "t": t,
        "records": [list(r) for r in records],
    }


def offsets(o: dict[int, int], t: float, final_sample: bool = False) -> dict[str, Any]:
    row: dict[str, Any] = {"type": "offsets", "t": t, "offsets": {str(p): v for p, v in o.items()}}
    if final_sample:
        row["final"] = True
    return row


def base() -> list[dict[str, Any]]:
    """t1-1 committed across partitions 0 and 1, t1-2 aborted, one consume-transform-produce
    transaction over t1-1's records, offsets moving forward."""
    committed = [(0, 0, "t1-1/0"), (1, 0, "t1-1/1")]
    everything = [*committed, (0, 2, "t1-2/0"), (1, 2, "t1-2/1")]
    outputs = [(0, 0, "ctp|0|0|t1-1/0"), (1, 0, "ctp|1|0|t1-1/1")]
    return [
        txn("t1-1", [(0, "t1-1/0"), (1, "t1-1/1")], "commit", 1.0),
        txn("t1-2", [(0, "t1-2/0"), (1, "t1-2/1")], "abort", 2.0),
        reads(committed, 1.5),
        reads(everything, 2.5, iso="uncommitted"),
        offsets({0: 1, 1: 1}, 3.0),
        offsets({0: 1, 1: 1}, 4.0, final_sample=True),
        final(IN, "committed", committed),
        final(IN, "uncommitted", everything),
        final(OUT, "committed", outputs),
        final(OUT, "uncommitted", outputs),
    ]


def checks(rows: list[dict[str, Any]]) -> set[str]:
    return {v.check for v in check_txn_history(rows, IN, OUT)}


def replace_final(
    rows: list[dict[str, Any]], topic: str, iso: str, records: list[tuple[int, int, str]]
) -> list[dict[str, Any]]:
    out = [
        r for r in rows if not (r["type"] == "final" and r["topic"] == topic and r["iso"] == iso)
    ]
    return [*out, final(topic, iso, records)]


def test_values_parse() -> None:
    assert txn_of("t1-4/2") == "t1-4"
    assert txn_of("junk") is None
    assert ctp_input("ctp|2|17|t1-4/2") == (2, 17, "t1-4/2")
    assert ctp_input("t1-4/2") is None


def test_a_clean_history_passes() -> None:
    assert check_txn_history(base(), IN, OUT) == []


def test_an_aborted_write_in_the_final_read_committed_read() -> None:
    rows = replace_final(
        base(), IN, "committed", [(0, 0, "t1-1/0"), (1, 0, "t1-1/1"), (0, 2, "t1-2/0")]
    )
    assert "aborted-read" in checks(rows)


def test_an_aborted_write_read_live_under_read_committed() -> None:
    assert "aborted-read" in checks([*base(), reads([(0, 2, "t1-2/0")], 2.5)])


def test_a_lost_committed_write() -> None:
    rows = replace_final(base(), IN, "committed", [(0, 0, "t1-1/0")])
    found = checks(rows)
    assert "lost-write" in found and "non-atomic" in found


def test_a_committed_write_missing_from_read_uncommitted() -> None:
    rows = replace_final(base(), IN, "uncommitted", [(0, 0, "t1-1/0")])
    assert "lost-write" in checks(rows)


def test_a_duplicated_committed_write() -> None:
    rows = replace_final(
        base(), IN, "committed", [(0, 0, "t1-1/0"), (1, 0, "t1-1/1"), (1, 1, "t1-1/1")]
    )
    assert "duplicate" in checks(rows)


def test_an_unknown_outcome_seen_in_part_is_non_atomic() -> None:
    rows = [*base(), txn("t2-1", [(0, "t2-1/0"), (1, "t2-1/1")], "unknown")]
    rows = replace_final(
        rows, IN, "committed", [(0, 0, "t1-1/0"), (1, 0, "t1-1/1"), (0, 3, "t2-1/0")]
    )
    assert "non-atomic" in checks(rows)


def test_a_reader_past_part_of_a_transaction_it_saw_the_rest_of() -> None:
    """The reader saw t1-1/0, then read partition 1 beyond offset 0 without t1-1/1."""
    rows = [r for r in base() if r["type"] != "reads"]
    rows += [reads([(0, 0, "t1-1/0"), (1, 3, "later")], 1.5)]
    assert checks(rows) == {"non-atomic-read"}


def test_a_read_before_the_commit_was_asked_for() -> None:
    rows = [r for r in base() if r["type"] != "reads"]
    rows += [reads([(0, 0, "t1-1/0"), (1, 0, "t1-1/1")], 0.5)]
    assert checks(rows) == {"uncommitted-read"}


def test_a_read_of_a_transaction_that_never_committed() -> None:
    rows = [*base(), txn("t2-1", [(0, "t2-1/0")], "unknown"), reads([(0, 3, "t2-1/0")], 5.0)]
    assert checks(rows) == {"uncommitted-read"}


def test_an_input_processed_into_two_committed_outputs() -> None:
    outputs = [(0, 0, "ctp|0|0|t1-1/0"), (1, 0, "ctp|1|0|t1-1/1"), (0, 1, "ctp|0|0|t1-1/0")]
    assert "ctp-duplicate" in checks(replace_final(base(), OUT, "committed", outputs))


def test_an_input_below_the_committed_offset_without_output() -> None:
    outputs = [(0, 0, "ctp|0|0|t1-1/0")]
    assert checks(replace_final(base(), OUT, "committed", outputs)) == {"ctp-lost"}


def test_an_output_naming_the_wrong_input() -> None:
    outputs = [(0, 0, "ctp|0|0|t1-1/0"), (1, 0, "ctp|1|0|t1-2/1")]
    assert "ctp-mismatch" in checks(replace_final(base(), OUT, "committed", outputs))


def test_committed_offsets_going_backwards() -> None:
    rows = [*base(), offsets({0: 0, 1: 1}, 3.5)]
    assert checks(rows) == {"offsets-backwards"}


def test_an_incomplete_final_read_is_reported_not_judged_as_lost() -> None:
    rows = [
        r
        for r in base()
        if not (r["type"] == "final" and r["topic"] == IN and r["iso"] == "committed")
    ]
    rows.append(final(IN, "committed", [(0, 0, "t1-1/0")], complete=False))
    assert checks(rows) == {"final-read-incomplete"}


def test_missing_final_reads() -> None:
    rows = [r for r in base() if r["type"] != "final"]
    assert checks(rows) == {"final-read-missing"}
