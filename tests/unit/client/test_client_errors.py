"""Every protocol error code maps to a typed exception under one root."""

from __future__ import annotations

import pickle

from rillet.client import errors
from rillet.client.errors import (
    BrokerError,
    NotLeaderOrFollowerError,
    RilletError,
    TopicAlreadyExistsError,
    error_class_for,
    error_for,
)
from rillet.wire.error_codes import ErrorCode


def test_every_code_has_its_own_class() -> None:
    for code in ErrorCode:
        if code is ErrorCode.NONE:
            continue
        cls = error_class_for(code)
        assert cls is not BrokerError, code
        err = error_for(code, "m")
        assert type(err) is cls and err.code is code and str(err) == "m"
        assert err.retriable == code.retriable
        assert err.needs_metadata_refresh == code.needs_metadata_refresh
        assert isinstance(err, RilletError)


def test_named_classes_and_flags() -> None:
    assert isinstance(error_for(ErrorCode.TOPIC_ALREADY_EXISTS), TopicAlreadyExistsError)
    assert not error_for(ErrorCode.TOPIC_ALREADY_EXISTS).retriable
    stale = error_for(ErrorCode.NOT_LEADER_OR_FOLLOWER, "t-0")
    assert isinstance(stale, NotLeaderOrFollowerError)
    assert stale.retriable and stale.needs_metadata_refresh
    assert str(error_for(ErrorCode.OFFSET_OUT_OF_RANGE)) == "OFFSET_OUT_OF_RANGE"


def test_unknown_numbers_become_unknown_server_error() -> None:
    err = error_for(31337, "odd")
    assert isinstance(err, errors.UnknownServerError)
    assert err.code is ErrorCode.UNKNOWN_SERVER_ERROR and "31337" in str(err)


def test_client_side_errors_share_the_root() -> None:
    for cls in (
        errors.ConnectionFailedError,
        errors.ClientTimeoutError,
        errors.ClientClosedError,
        errors.BufferFullError,
        errors.NoOffsetForPartitionError,
    ):
        assert issubclass(cls, RilletError) and not issubclass(cls, BrokerError)


def test_errors_survive_pickling_with_their_code() -> None:
    for err in (error_for(ErrorCode.NOT_ENOUGH_REPLICAS, "few"), BrokerError("x", ErrorCode.NONE)):
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is type(err) and back.code is err.code and str(back) == str(err)
