"""Fuzzing every listener's pre-authentication path: random and structured-random bytes from
a client that never logged in (SASL on), into a real connection object over loopback TCP.
Whatever arrives, no exception escapes the connection (nothing is logged as a failure), the
bytes it holds stay within one pre-authentication frame and one read (the unauthenticated
budget is exactly that large, so needing more would hang and time out), and the outcome is
answers or a close once the client stops sending.

A few seconds in CI; RILLET_FUZZ_EXAMPLES raises the examples per listener for a long run.
"""

from __future__ import annotations

import logging
import os
import struct
from collections.abc import Callable
from pathlib import Path

import cbor2
import pytest
import trio
from broker_context import middle
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from served_connection import Served, serving
from test_preauth_limits import kafka, native

from rillet.broker.config.limits_config import LimitsConfig
from rillet.broker.network.read_shares import ReadShares, RequestBytesBudget
from rillet.broker.network.request_budget import ReadPolicy

EXAMPLES = int(os.environ.get("RILLET_FUZZ_EXAMPLES", "60"))
CAP = 4096  # sasl_server_max_receive_size here: small, so fuzzed frames cross it
READ = 1024

FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

sizes = st.one_of(st.integers(0, CAP + 8), st.integers(-(2**31), 2**31 - 1))


def kafka_frame(api: int, version: int, body: bytes, declared: int | None) -> bytes:
    head = struct.pack(">hhih", api, version, 1, 4) + b"fuzz"
    size = len(head) + len(body) if declared is None else declared
    return struct.pack(">i", size) + head + body


def native_frame(header: dict[str, object], declared: int | None) -> bytes:
    encoded = cbor2.dumps(header)
    size = len(encoded) if declared is None else declared
    return struct.pack(">I", size & 0xFFFFFFFF) + encoded


kafka_inputs = st.lists(
    st.one_of(
        st.binary(max_size=CAP + 64),
        st.builds(
            kafka_frame,
            st.sampled_from([3, 17, 18, 36, 0, 1, 42, -1, 32767]),
            st.integers(-2, 12),
            st.binary(max_size=CAP),
            st.one_of(st.none(), sizes),
        ),
    ),
    max_size=4,
)
native_inputs = st.lists(
    st.one_of(
        st.binary(max_size=CAP + 64),
        st.builds(
            native_frame,
            st.fixed_dictionaries(
                {
                    "api": st.one_of(
                        st.sampled_from([3, 17, 18, 36, 1006, 1007, 0, 1]), st.integers()
                    ),
                    "version": st.integers(-1, 2),
                    "correlation_id": st.integers(-(2**31), 2**31 - 1),
                    "body": st.one_of(
                        st.none(),
                        st.dictionaries(st.text(max_size=8), st.binary(max_size=64), max_size=4),
                        st.lists(st.integers(), max_size=CAP // 8),
                    ),
                }
            ),
            st.one_of(st.none(), sizes),
        ),
    ),
    max_size=4,
)


async def outcome(make: Callable[[trio.SocketStream], Served], chunks: list[bytes]) -> bytes:
    """All the node answered before it closed the connection (the client sent ``chunks``
    and then the end of its stream)."""
    answered = b""
    async with serving(make) as connect:
        client = await connect()
        with trio.fail_after(10):
            try:
                for chunk in chunks:
                    await client.send_all(chunk)
                await client.send_eof()
            except trio.BrokenResourceError:
                pass  # closed by the node while sending: a close is an outcome
            while True:
                try:
                    data = await client.receive_some(65536)
                except trio.BrokenResourceError:
                    break
                if not data:
                    break
                answered += data
    return answered


def run_one(
    tmp_path: Path,
    listener: Callable[..., Callable[[trio.SocketStream], Served]],
    chunks: list[bytes],
    caplog: pytest.LogCaptureFixture,
) -> None:
    limits = LimitsConfig(sasl_server_max_receive_size=CAP, receive_buffer_bytes=READ)
    unauthenticated = RequestBytesBudget(CAP + 4 + READ)  # one connection's bound exactly
    policy = ReadPolicy.for_limits(limits)
    shares = ReadShares(policy.budget, policy.budget.capacity_bytes, unauthenticated)
    policy = ReadPolicy(
        policy.budget, 30.0, 30.0, 30.0, None, shares, CAP, policy.offload
    )  # fmt: skip
    m = middle(tmp_path)
    caplog.clear()
    with caplog.at_level(logging.ERROR):
        trio.run(outcome, listener(m, policy), chunks)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    assert unauthenticated.available_bytes == unauthenticated.capacity_bytes  # all given back
    assert policy.budget.in_use_bytes == 0  # nothing was read as a logged-in client


LISTENERS = {"kafka": (kafka, kafka_inputs), "native": (native, native_inputs)}


@pytest.mark.parametrize("listener", sorted(LISTENERS))
@FUZZ
@given(data=st.data())
def test_a_listener_before_login_answers_or_closes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, listener: str, data: st.DataObject
) -> None:
    make, inputs = LISTENERS[listener]
    run_one(tmp_path, make, data.draw(inputs), caplog)
