"""The read budget per class: a principal holds at most its share, which leaves room for
other principals and for connections that have not logged in (their own small pool); a
principal's entry goes once it holds nothing; the start-up checks of the new limits."""

from __future__ import annotations

import cbor2
import pytest

from rillet.broker.config import load_config
from rillet.broker.config.limits_config import LimitsConfig
from rillet.broker.errors import ConfigError
from rillet.broker.network.read_shares import ReadShares, RequestBytesBudget
from rillet.wire.errors import MalformedFrame
from rillet.wire.messages import ApiVersionsRequest
from rillet.wire.protocol import encode_request
from rillet.wire.request_peek import peek_request_api


def test_a_principal_at_its_share_leaves_room_for_others_and_strangers() -> None:
    authenticated, strangers = RequestBytesBudget(100), RequestBytesBudget(10)
    shares = ReadShares(authenticated, 60, strangers)
    alice = shares.for_principal("User:alice")
    assert alice.try_take(60)
    assert not alice.try_take(1)  # her share is spent, the pool is not
    assert authenticated.available_bytes == 40
    assert shares.for_principal("User:bob").try_take(40)  # bob still reads
    assert shares.for_principal(None).try_take(10)  # and so does a stranger
    assert not shares.for_principal(None).try_take(1)  # strangers share 10 bytes only
    alice.give(60)
    assert shares.principals_holding == 1  # alice's entry went with her last byte
    assert authenticated.available_bytes == 60


def test_the_api_is_read_before_the_body_and_only_when_it_comes_first() -> None:
    frame = b"".join(bytes(p) for p in encode_request(1, ApiVersionsRequest()))  # type: ignore[misc]
    assert peek_request_api(frame[4:]) == 18
    assert peek_request_api(cbor2.dumps({"body": [0] * 10, "api": 18})) is None
    with pytest.raises(MalformedFrame):
        peek_request_api(b"\x01\x02")


def test_the_defaults_hold_and_pre_login_limits_are_checked_at_start_up() -> None:
    limits = LimitsConfig()
    assert limits.sasl_server_max_receive_size == 524288
    assert limits.principal_queued_max_request_bytes == 124 * 1024 * 1024
    bad = [
        ({"sasl_server_max_receive_size": 1 << 30}, "must be <= max_frame_bytes"),
        ({"unauthenticated_queued_max_request_bytes": 1024}, "unauthenticated_queued_max"),
        ({"unauthenticated_queued_max_request_bytes": 200 << 20}, "queued_max_request_bytes -"),
        ({"queued_max_request_bytes_per_principal": 1 << 20}, "per_principal must be 0 or"),
        ({"request_decode_threads": 0}, "request_decode_threads must be >= 1"),
    ]
    for settings, message in bad:
        overrides = {f"limits.{k}": v for k, v in settings.items()}
        with pytest.raises(ConfigError, match=message):
            load_config(None, overrides)
