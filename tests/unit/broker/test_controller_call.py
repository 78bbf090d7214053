"""The controller call's retry schedule (ControllerLink.call and the replication simulation
both run it), event by event: no socket, task or clock."""

from __future__ import annotations

from rillet.broker.cluster.controller_call import (
    INITIAL_BACKOFF_S,
    MAX_BACKOFF_S,
    ControllerCall,
    Finished,
    Retry,
    Send,
)


def test_an_answer_from_the_controller_ends_the_call() -> None:
    call: ControllerCall[str] = ControllerCall(5.0)
    assert call.start() == Send()
    assert call.answered(1, "ok", not_controller=False, now_s=0.3) == Finished("ok")
    assert call.done


def test_not_the_controller_backs_off_doubling_up_to_the_cap() -> None:
    call: ControllerCall[str] = ControllerCall(60.0)
    call.start()
    now_s, waits = 10.0, []
    for _ in range(8):
        step = call.answered(2, "no", not_controller=True, now_s=now_s)
        assert isinstance(step, Retry)
        waits.append(round(step.at_s - now_s, 6))
        now_s = step.at_s
    assert waits[0] == INITIAL_BACKOFF_S
    assert waits[:3] == [INITIAL_BACKOFF_S, 2 * INITIAL_BACKOFF_S, 4 * INITIAL_BACKOFF_S]
    assert max(waits) == MAX_BACKOFF_S == waits[-1]
    assert not call.done
    assert "voter 2 is not the controller" in call.unreachable_message()


def test_a_broken_attempt_backs_off_and_a_moved_controller_is_tried_at_once() -> None:
    call: ControllerCall[str] = ControllerCall(5.0)
    call.start()
    assert call.failed(1, "connection reset", now_s=1.0) == Retry(1.0 + INITIAL_BACKOFF_S)
    assert call.moved(1, "the local quorum names another leader") == Send()
    # The backoff grew with the failure, not with the move.
    assert call.failed(3, "timed out", now_s=2.0) == Retry(2.0 + 2 * INITIAL_BACKOFF_S)


def test_the_deadline_ends_the_call_without_an_answer() -> None:
    """No answer is "unknown outcome", never a refusal: the controller may have decided on
    an attempt whose answer was lost."""
    call: ControllerCall[str] = ControllerCall(0.2)
    call.start()
    call.failed(1, "connection reset", now_s=0.1)
    assert call.deadline_passed() == Finished(None)
    assert call.done
    assert call.unreachable_message() == (
        "no controller answered within 0.2s (voter 1: connection reset)"
    )
