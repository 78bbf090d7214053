"""A broker's membership as a state machine (BrokerLifecycle and the replication
simulation both run it): the transition table, and each answer's next action."""

from __future__ import annotations

import pytest

from rillet.broker.cluster.broker_membership import (
    RETRY_S,
    BrokerMembership,
    CatchUp,
    Heartbeat,
    MembershipError,
    Phase,
    Register,
)
from rillet.wire.error_codes import ErrorCode

INTERVAL_S, SESSION_S = 2.0, 9.0


def heartbeating(epoch: int = 5) -> BrokerMembership:
    m = BrokerMembership(INTERVAL_S, SESSION_S)
    m.start()
    assert m.registration_answered(ErrorCode.NONE, epoch) == CatchUp(epoch)
    assert m.metadata_caught_up() == Heartbeat(0.0)
    return m


def test_registration_retries_at_once_without_answer_and_after_a_pause_when_refused() -> None:
    m = BrokerMembership(INTERVAL_S, SESSION_S)
    assert m.start() == Register(0.0, fresh=True)
    assert m.registration_answered(None) == Register(0.0, fresh=False)
    assert m.registration_answered(ErrorCode.AUTHENTICATION_FAILED) == Register(RETRY_S, False)
    assert (m.phase, m.broker_epoch, m.caught_up) == (Phase.REGISTERING, None, False)
    assert m.registration_answered(ErrorCode.NONE, 7) == CatchUp(7)
    assert (m.phase, m.broker_epoch, m.caught_up) == (Phase.CATCHING_UP, 7, False)


def test_no_heartbeat_before_the_metadata_has_caught_up() -> None:
    m = BrokerMembership(INTERVAL_S, SESSION_S)
    m.start()
    with pytest.raises(MembershipError, match="while registering"):
        m.heartbeat_answered(ErrorCode.NONE, 1.0, fenced=False)
    with pytest.raises(MembershipError, match="while registering"):
        m.metadata_caught_up()
    m.registration_answered(ErrorCode.NONE, 3)
    with pytest.raises(MembershipError, match="while catching up"):
        m.heartbeat_answered(None, 1.0)


def test_heartbeats_are_timed_by_fencing_and_echo_a_new_controller_at_once() -> None:
    m = heartbeating()
    # Fenced: at most RETRY_S (unfencing should follow catching up promptly).
    assert m.heartbeat_answered(ErrorCode.NONE, 1.0, True, 11, 100) == Heartbeat(0.0)  # new key
    assert m.heartbeat_answered(ErrorCode.NONE, 1.1, True, 11, 200) == Heartbeat(RETRY_S)
    assert m.heartbeat_answered(ErrorCode.NONE, 1.2, False, 11, 300) == Heartbeat(INTERVAL_S)
    assert (m.fenced, m.heard) == (False, (11, 300))
    # No answer: the fencing last heard stands.
    assert m.heartbeat_answered(None, 5.0) == Heartbeat(INTERVAL_S)
    assert not m.fenced
    assert m.heartbeat_answered(ErrorCode.NONE, 6.0, False, 22, 50) == Heartbeat(0.0)


def test_a_stale_epoch_starts_a_new_membership_and_keeps_caught_up() -> None:
    m = heartbeating(5)
    assert m.heartbeat_answered(ErrorCode.UNKNOWN_MEMBER_ID, 1.0) == Register(0.0, fresh=True)
    assert (m.phase, m.broker_epoch, m.caught_up) == (Phase.REGISTERING, 5, True)
    assert m.registration_answered(ErrorCode.NONE, 9) == CatchUp(9)


def test_a_broker_hears_the_controller_for_half_a_session_after_an_answer() -> None:
    m = heartbeating()
    assert not m.hears_controller(0.0)
    m.heartbeat_answered(ErrorCode.NONE, 10.0, False, 1, 1)
    assert m.hears_controller(10.0 + SESSION_S / 2 - 0.01)
    assert not m.hears_controller(10.0 + SESSION_S / 2)
    m.heartbeat_answered(None, 20.0)  # silence renews nothing
    assert not m.hears_controller(20.0)
