"""Broker leases on their own: grace for a new term, renewal from two-way exchanges,
cut short by evidence, never by a late answer."""

from __future__ import annotations

from rillet.metadata_quorum.broker_leases import NO_ANSWER_HEARD, BrokerLeases, HeardAnswer
from rillet.metadata_quorum.controller import ControllerConfig
from rillet.metadata_quorum.records import RegisterBroker, UnfenceBroker
from rillet.metadata_quorum.state import MetadataState

SESSION_MS = 3_000
CONFIG = ControllerConfig(SESSION_MS, new_controller_grace_ms=2_000, reannounce_window_ms=500)


def state_with(*brokers: int) -> MetadataState:
    state = MetadataState()
    for i, b in enumerate(brokers, start=1):
        state.apply_entry(i, [RegisterBroker(b, f"inc-{b}", "h", 9000 + b)])
    for i, b in enumerate(brokers, start=len(brokers) + 1):
        state.apply_entry(i, [UnfenceBroker(b, state.brokers[b].broker_epoch)])
    return state


def test_a_new_term_gives_every_broker_the_grace_and_a_new_answer_key() -> None:
    state = state_with(1, 2)
    leases = BrokerLeases(CONFIG)
    leases.begin_term(state, 10_000, None, None)
    first_key = leases.answer_key
    assert leases.next_end_ms(state) == 12_000
    assert leases.awaiting_first_heartbeat(state, 10_000) == [1, 2]
    assert leases.expired(state, 11_999) == [] and leases.expired(state, 12_000) == [1, 2]
    leases.begin_term(state, 10_000, None, None)  # same clock, next term: still a new key
    assert leases.answer_key != first_key


def test_heartbeats_renew_and_evidence_ends_the_lease_sooner() -> None:
    state = state_with(1, 2)
    leases = BrokerLeases(CONFIG)
    leases.begin_term(state, 0, None, None)
    assert leases.renew(1, 1_000, NO_ANSWER_HEARD) == 1_000 + SESSION_MS
    assert leases.awaiting_first_heartbeat(state, 1_000) == [2]
    leases.end_soon(1, 1_500)  # its heartbeat connection closed
    assert leases.expired(state, 1_500) == [1]
    leases.end_soon(1, 9_000)  # never lengthened by this
    assert leases.expired(state, 1_500) == [1]
    leases.forget(2)
    assert leases.next_end_ms(state) == 1_500


def test_a_broker_that_hears_no_answers_keeps_its_lease_from_the_last_two_way_exchange() -> None:
    state = state_with(1)
    leases = BrokerLeases(CONFIG)
    leases.begin_term(state, 0, None, None)
    leases.renew(1, 100, NO_ANSWER_HEARD)
    leases.answered(1, 100, arrived_ms=100)
    heard = HeardAnswer(leases.answer_key, 100)
    assert leases.renew(1, 2_000, heard) == 2_000 + SESSION_MS  # it heard the latest answer
    leases.answered(1, 2_000, arrived_ms=2_000)
    # It echoes the answer of 100 for ever after (a one-way cut): counted from then, the
    # lease would have ended; it is never shortened, and moves no further.
    assert leases.renew(1, 4_000, heard) < 2_000 + SESSION_MS
    assert leases.expired(state, 2_000 + SESSION_MS) == [1]
    # An answer stamped more than half a session after its heartbeat does not count: a
    # broker echoing the last timely one has heard everything it could.
    leases.answered(1, 9_000, arrived_ms=4_000)
    assert leases.renew(1, 4_100, HeardAnswer(leases.answer_key, 2_000)) == 4_100 + SESSION_MS
