"""Kafka client events (delivery reports, consumed batches, commits, rebalances, group
descriptions) become exactly the history and member-file rows the native workload writes,
and parse back to what the checker judges."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rillet.chaos import kafka_events
from rillet.chaos.history import parse_history
from rillet.chaos.members import MemberProcesses

OP = {"f": "send", "process": "w1", "value": "w1:7", "partition": 1}


def test_a_delivery_report_without_error_is_ok_at_its_offset() -> None:
    assert kafka_events.delivered(OP, None, 1, 42) == {"type": "ok", **OP, "offset": 42}


def test_a_delivery_report_with_an_error_is_unknown_never_failed() -> None:
    row = kafka_events.delivered(OP, "KafkaError{code=_MSG_TIMED_OUT}", 1, -1)
    assert row["type"] == "unknown" and "_MSG_TIMED_OUT" in row["error"]
    assert len(kafka_events.delivered(OP, "x" * 1000, 1, 5)["error"]) == 300


def test_an_ack_without_an_offset_or_for_another_partition_is_unknown() -> None:
    assert kafka_events.delivered(OP, None, 1, -1)["type"] == "unknown"
    assert kafka_events.delivered(OP, None, 1, None)["type"] == "unknown"
    moved = kafka_events.delivered(OP, None, 2, 42)
    assert moved["type"] == "unknown" and "partition 2" in moved["error"]


def test_a_refused_produce_is_failed() -> None:
    assert kafka_events.refused(OP, "BufferError()") == {
        "type": "fail",
        **OP,
        "error": "BufferError()",
    }


def test_kafka_send_rows_parse_into_the_same_writes_as_native_ones() -> None:
    other = {**OP, "value": "w1:8"}
    third = {**OP, "value": "w1:9"}
    events = [
        {"type": "invoke", **OP, "t": 0.1},
        {"type": "invoke", **other, "t": 0.2},
        {"type": "invoke", **third, "t": 0.3},
        {**kafka_events.delivered(OP, None, 1, 42), "t": 0.5},
        {**kafka_events.delivered(other, "timed out", None, None), "t": 0.6},
        {**kafka_events.refused(third, "queue full"), "t": 0.7},
    ]
    h = parse_history([json.dumps(e) for e in events])
    assert [(w.value, w.outcome, w.offset) for w in h.writes] == [
        ("w1:7", "ok", 42),
        ("w1:8", "unknown", None),
        ("w1:9", "fail", None),
    ]


def test_a_batch_commits_the_offset_after_the_last_record_of_each_partition() -> None:
    consumed = [(0, 5), (1, 9), (0, 6), (0, 7), (1, 10)]
    assert kafka_events.offsets_to_commit(consumed) == {0: 8, 1: 11}
    assert kafka_events.offsets_to_commit([]) == {}


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 10_000)), max_size=50))
def test_committed_offsets_cover_every_consumed_record(consumed: list[tuple[int, int]]) -> None:
    offsets = kafka_events.offsets_to_commit(consumed)
    assert set(offsets) == {p for p, _ in consumed}
    for p, o in consumed:
        assert offsets[p] > o
        assert offsets[p] - 1 in {off for q, off in consumed if q == p}


def test_commit_and_rebalance_rows_say_what_happened() -> None:
    assert kafka_events.commit_row("c1", {1: 5, 0: 3}, None) == {
        "m": "c1",
        "e": "committed",
        "offsets": {"0": 3, "1": 5},
    }
    failed = kafka_events.commit_row("c1", {0: 3}, "REBALANCE_IN_PROGRESS")
    assert failed["e"] == "commit-failed" and failed["error"] == "REBALANCE_IN_PROGRESS"
    assert kafka_events.assignment_row("c2", "assigned", [3, 1], "rdkafka-1") == {
        "m": "c2",
        "e": "assigned",
        "ps": [1, 3],
        "member_id": "rdkafka-1",
    }
    assert kafka_events.assignment_row("c2", "lost", [], None)["member_id"] == ""


def test_member_rows_are_read_back_as_received_records_and_events_are_skipped(
    tmp_path: Path,
) -> None:
    members = MemberProcesses(tmp_path, "b:1", "g", "t", 0.0)
    members.procs["c1"] = None  # type: ignore[assignment]  # only the name is read
    rows = [
        kafka_events.assignment_row("c1", "assigned", [0], "m-1"),
        kafka_events.received_row("c1", 0, 4, b"w2:8"),
        kafka_events.received_row("c1", 0, 5, None),
        kafka_events.received_row("c1", 0, 6, b"\xff"),
        kafka_events.commit_row("c1", {0: 7}, None),
    ]
    lines = [json.dumps({**r, "t": 1.0}) for r in rows]
    members.out_file("c1").write_text("\n".join(lines) + "\n{torn", encoding="utf-8")
    got = [(r.member, r.partition, r.offset, r.value) for r in members.received()]
    assert got == [("c1", 0, 4, "w2:8"), ("c1", 0, 5, ""), ("c1", 0, 6, "\ufffd")]


def encode_assignment(topics: dict[str, list[int]], version: int = 0) -> bytes:
    """Kafka's consumer-protocol assignment, written out field by field for the test."""
    out = struct.pack(">hi", version, len(topics))
    for topic, partitions in topics.items():
        name = topic.encode()
        out += struct.pack(">h", len(name)) + name
        out += struct.pack(f">i{len(partitions)}i", len(partitions), *partitions)
    return out + struct.pack(">i", -1)  # no user data


def test_a_consumer_protocol_assignment_decodes_to_its_partitions() -> None:
    data = encode_assignment({"chaos": [0, 2], "other": [1]}, version=3)
    assert kafka_events.decode_assignment(data) == [("chaos", 0), ("chaos", 2), ("other", 1)]
    assert kafka_events.decode_assignment(b"") == []
    assert kafka_events.decode_assignment(encode_assignment({})) == []


@given(st.dictionaries(st.text(max_size=8), st.lists(st.integers(0, 2**31 - 1), max_size=8)))
def test_assignments_round_trip(topics: dict[str, list[int]]) -> None:
    expected = [(t, p) for t, ps in topics.items() for p in ps]
    assert kafka_events.decode_assignment(encode_assignment(topics)) == expected


@given(st.binary(max_size=64))
def test_garbage_assignments_raise_a_typed_error_or_decode(data: bytes) -> None:
    try:
        kafka_events.decode_assignment(data)
    except kafka_events.AssignmentDecodeError:
        pass


def test_truncated_assignments_raise_a_typed_error() -> None:
    data = encode_assignment({"chaos": [0, 1, 2]})
    for cut in range(1, len(data) - 4):
        with pytest.raises(kafka_events.AssignmentDecodeError):
            kafka_events.decode_assignment(data[:cut])


def test_a_classic_group_sample_keeps_its_generation_and_the_topic_s_partitions() -> None:
    row = kafka_events.group_sample(
        7, {"m-b": [("chaos", 3), ("other", 1)], "m-a": [("chaos", 2), ("chaos", 0)]}, "chaos"
    )
    assert row == {"type": "group", "generation": 7, "owned": {"m-a": [0, 2], "m-b": [3]}}
    h = parse_history([json.dumps({**row, "t": 2.0})])
    assert h.groups[0].generation == 7
    assert h.groups[0].owned == {"m-a": [0, 2], "m-b": [3]}
