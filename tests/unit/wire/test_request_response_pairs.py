"""Each request class names its response type (``Request[R]``, for type checking), and the
codec's table reads the pairing from there: one statement of it."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from rillet.wire import group_messages as gm
from rillet.wire import raft_voter_messages as rvm
from rillet.wire.api import ApiKey
from rillet.wire.messages import REQUEST_TYPES, ProduceRequest, ProduceResponse
from rillet.wire.request import Request, response_type_of


def test_the_codec_pairs_each_request_with_the_response_it_names() -> None:
    assert REQUEST_TYPES[ApiKey.PRODUCE] == (ProduceRequest, ProduceResponse)
    # named in quotes, in another module than the table's
    assert REQUEST_TYPES[ApiKey.FIND_COORDINATOR][1] is gm.FindCoordinatorResponse
    # one response class answering several requests
    assert REQUEST_TYPES[ApiKey.ADD_RAFT_VOTER][1] is rvm.RaftVoterResponse
    assert REQUEST_TYPES[ApiKey.REMOVE_RAFT_VOTER][1] is rvm.RaftVoterResponse
    assert response_type_of(gm.LeaveGroupRequest) is gm.LeaveGroupResponse


@dataclass(frozen=True)
class _Unnamed(Request):  # type: ignore[type-arg]
    pass


def test_a_request_naming_no_response_is_refused() -> None:
    with pytest.raises(TypeError, match="names no response class"):
        response_type_of(_Unnamed)
