"""The controller call's retry schedule and the link's voter choice (ControllerLink.call and
the replication simulation both run them), event by event: no socket, task or clock."""

from __future__ import annotations

from rillet.broker.cluster.controller_call import (
    INITIAL_BACKOFF_S,
    MAX_BACKOFF_S,
    ControllerCall,
    Finished,
    Retry,
    Send,
    VoterChoice,
    not_controller_hint,
)
from rillet.wire.cluster_messages import BrokerHeartbeatResponse
from rillet.wire.error_codes import ErrorCode


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


def test_an_answer_after_an_unanswered_attempt_says_so() -> None:
    """A voter may still carry out an attempt that went unanswered (a broken connection, a
    timeout, one abandoned for another controller): the answer that ends the call says so,
    and the ISR cycle then takes a refusal as no proof (seeds 692 and 1153)."""
    clean: ControllerCall[str] = ControllerCall(5.0)
    clean.start()
    clean.answered(2, "no", not_controller=True, now_s=0.1)  # refused to act: not ambiguous
    assert clean.answered(1, "refused", False, now_s=0.2) == Finished("refused")
    for unanswered in ("failed", "moved"):
        call: ControllerCall[str] = ControllerCall(5.0)
        call.start()
        if unanswered == "failed":
            call.failed(1, "timed out", now_s=0.1)
        else:
            call.moved(1, "another controller is known")
        assert call.answered(2, "refused", False, now_s=0.3) == Finished(
            "refused", after_unanswered=True
        )


def test_the_deadline_ends_the_call_without_an_answer() -> None:
    """No answer is "unknown outcome", never a refusal: the controller may have decided on
    an attempt whose answer was lost."""
    call: ControllerCall[str] = ControllerCall(0.2)
    call.start()
    call.failed(1, "connection reset", now_s=0.1)
    assert call.deadline_passed() == Finished(None, after_unanswered=True)
    assert call.done
    assert call.unreachable_message() == (
        "no controller answered within 0.2s (voter 1: connection reset)"
    )


def test_the_voter_choice_follows_answers_and_hints_and_goes_round_otherwise() -> None:
    choice = VoterChoice([3, 1, 2])
    assert [choice.target(None) for _ in range(4)] == [2, 3, 1, 2]  # in turn, none known
    choice.answered(2, 3)  # "not the controller, try 3"
    assert (choice.target(None), choice.hint(None)) == (3, 3)
    choice.answered(3, None)  # 3 answers as the controller: stay with it
    assert [choice.target(None) for _ in range(2)] == [3, 3]
    assert choice.answered_by == 3
    assert choice.target(1) == 1  # the local quorum's leader comes first
    choice.answered(3, -1)  # deposed, knows no leader: go round again
    assert choice.hint(None) is None
    choice.answered(1, 1)  # a voter naming itself is no hint
    assert choice.hint(None) is None
    choice.answered(2, 7)  # nor is a node that is not a voter
    assert choice.hint(None) is None
    choice.answered(2, None)
    choice.failed(2)  # a broken attempt: the voter may be gone
    assert choice.hint(None) is None
    choice.learn_voter(4)
    assert sorted({choice.target(None) for _ in range(4)}) == [1, 2, 3, 4]


def test_an_answer_says_not_the_controller_by_its_error_and_hint() -> None:
    assert not_controller_hint(BrokerHeartbeatResponse(ErrorCode.NONE, 2)) is None
    refused = BrokerHeartbeatResponse(ErrorCode.NOT_CONTROLLER, 2)
    assert not_controller_hint(refused) == 2
    assert not_controller_hint(BrokerHeartbeatResponse(ErrorCode.NOT_CONTROLLER)) == -1
    assert not_controller_hint(object()) is None
