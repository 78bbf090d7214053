"""The gate a node asks before answering a metadata question (sans-I/O).

Defect: after all three nodes were killed, a node that had just restarted answered Kafka
Metadata from the little it had applied; librdkafka took a 6-partition topic for 0
partitions and failed every queued record. A node answers only once it has applied what the
quorum had committed after it started, and never from an older state than it answered from.
"""

from __future__ import annotations

from rillet.broker.cluster.metadata_readiness import MetadataReadiness


def test_a_node_that_learned_no_committed_offset_does_not_answer() -> None:
    gate = MetadataReadiness()
    refusal = gate.check(applied_offset=500)  # what its own disk had: maybe not all of it
    assert refusal is not None and "no committed offset learned" in refusal.reason
    assert gate.start_up_offset is None


def test_a_node_answers_once_it_applied_the_offset_learned_after_start() -> None:
    gate = MetadataReadiness()
    gate.learn_committed(120)
    refusal = gate.check(applied_offset=3)
    assert refusal is not None and "applied offset 3 of 120" in refusal.reason
    assert gate.check(applied_offset=119) is not None
    assert gate.check(applied_offset=120) is None
    assert gate.check(applied_offset=121) is None


def test_the_highest_learned_offset_counts_until_caught_up_and_none_after() -> None:
    gate = MetadataReadiness()
    gate.learn_committed(50)
    gate.learn_committed(40)  # an older answer arriving late changes nothing
    assert gate.start_up_offset == 50
    gate.learn_committed(60)  # a second registration before catching up
    assert gate.check(applied_offset=55) is not None
    assert gate.check(applied_offset=60) is None
    # Registering again later (a stale broker epoch) does not close the node to clients.
    gate.learn_committed(900)
    assert gate.start_up_offset == 60
    assert gate.check(applied_offset=61) is None


def test_never_an_answer_older_than_one_already_given() -> None:
    gate = MetadataReadiness()
    gate.learn_committed(10)
    assert gate.check(applied_offset=30) is None
    gate.answered(30)
    gate.answered(20)  # an answer built from an older state earlier, finished later
    assert gate.answered_offset == 30
    refusal = gate.check(applied_offset=29)
    assert refusal is not None and "older than the 30 already answered" in refusal.reason
    assert gate.check(applied_offset=30) is None
