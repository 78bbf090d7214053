"""``rillet cluster add-voter / remove-voter``: when a refusal means the command's own change
was already made by an attempt whose answer was lost."""

from __future__ import annotations

from rillet.cli.voters_command import made_by_a_lost_attempt
from rillet.wire.error_codes import ErrorCode


def test_a_removal_refused_as_not_a_voter_is_done_if_the_node_was_one() -> None:
    assert made_by_a_lost_attempt(ErrorCode.VOTER_NOT_FOUND, True, removing=True)
    assert not made_by_a_lost_attempt(ErrorCode.VOTER_NOT_FOUND, False, removing=True)
    assert not made_by_a_lost_attempt(ErrorCode.VOTER_NOT_FOUND, None, removing=True)


def test_an_addition_refused_as_a_duplicate_is_done_if_the_node_was_no_voter() -> None:
    assert made_by_a_lost_attempt(ErrorCode.DUPLICATE_VOTER, False, removing=False)
    assert not made_by_a_lost_attempt(ErrorCode.DUPLICATE_VOTER, True, removing=False)
    assert not made_by_a_lost_attempt(ErrorCode.DUPLICATE_VOTER, None, removing=False)


def test_other_refusals_stay_refusals() -> None:
    for code in (ErrorCode.NOT_CONTROLLER, ErrorCode.REQUEST_TIMED_OUT, ErrorCode.INVALID_REQUEST):
        assert not made_by_a_lost_attempt(code, True, removing=True)
        assert not made_by_a_lost_attempt(code, False, removing=False)
