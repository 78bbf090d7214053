"""A broker echoes a new controller's first answer at once.

A new controller renews the lease of the previous quorum leader's broker only once that
broker echoes one of its answers, and counts its session from when the quorum last heard
it. A former controller resuming from a pause just shorter than the session must therefore
echo quickly, not a heartbeat interval later (it was fenced on resuming, and lost its
leaderships, in the chaos pause row). The step function, then the heartbeat loop with a
controller link that answers from a script, on trio's mock clock.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, cast

import trio
import trio.testing

from rillet.broker.cluster.broker_lifecycle import BrokerLifecycle
from rillet.broker.cluster.broker_membership import next_heartbeat_s
from rillet.broker.cluster.controller_link import ControllerLink
from rillet.broker.cluster.metadata_view import MetadataView
from rillet.broker.config import NodeConfig
from rillet.wire.cluster_messages import BrokerHeartbeatRequest, BrokerHeartbeatResponse
from rillet.wire.error_codes import ErrorCode

INTERVAL_S = NodeConfig().quorum.broker_heartbeat_interval_ms / 1000


def test_the_first_answer_of_a_new_controller_is_echoed_at_once() -> None:
    assert next_heartbeat_s(ErrorCode.NONE, False, INTERVAL_S, new_controller=True) == 0.0
    assert next_heartbeat_s(ErrorCode.NONE, True, INTERVAL_S, new_controller=True) == 0.0
    assert next_heartbeat_s(ErrorCode.NONE, False, INTERVAL_S) == INTERVAL_S
    assert next_heartbeat_s(ErrorCode.UNKNOWN_MEMBER_ID, False, INTERVAL_S, True) is None


@dataclass
class _ScriptedLink:
    """Answers heartbeats with the next answer key of ``keys`` (then the last, forever);
    records when each heartbeat was sent and which answer key it echoed."""

    keys: list[int]
    sent: list[tuple[float, int]] = field(default_factory=list)

    async def call(self, request: BrokerHeartbeatRequest, timeout_s: float) -> Any:
        self.sent.append((trio.current_time(), request.heard_answer_key))
        key = self.keys[min(len(self.sent), len(self.keys)) - 1]
        return BrokerHeartbeatResponse(ErrorCode.NONE, 2, False, None, key, 1000)

    async def pause(self, seconds: float) -> None:
        await trio.sleep(seconds)  # no local quorum naming another controller


@dataclass
class _Auth:
    token: bytes = b""


@dataclass
class _State:
    last_applied_index: int = 7


@dataclass
class _View:
    """What a heartbeat request reads of the metadata view."""

    auth: _Auth = field(default_factory=_Auth)
    state: _State = field(default_factory=_State)


def _heartbeats(keys: list[int], count: int) -> list[tuple[float, int]]:
    link = _ScriptedLink(keys)
    lifecycle = BrokerLifecycle(
        NodeConfig(), cast(MetadataView, _View()), cast(ControllerLink, link), 0
    )

    # Registered as epoch 5 and caught up: the loop runs until cancelled; stop it once
    # enough heartbeats went.
    lifecycle.membership.registration_answered(ErrorCode.NONE, 5)
    lifecycle.membership.metadata_caught_up()

    async def bounded() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lifecycle._heartbeat_until_stale, 5)
            while len(link.sent) < count:
                await trio.sleep(INTERVAL_S / 10)
            nursery.cancel_scope.cancel()

    trio.run(bounded, clock=trio.testing.MockClock(autojump_threshold=0))
    return [(round(t, 6), key) for t, key in link.sent[:count]]


def test_the_heartbeat_loop_echoes_a_new_controller_without_waiting_an_interval() -> None:
    # The old controller (key 11) answers twice; then a new one (key 22) takes over.
    sent = _heartbeats([11, 11, 22, 22, 22], 5)
    times = [t for t, _ in sent]
    echoed = [key for _, key in sent]
    assert echoed == [0, 11, 11, 22, 22]
    gaps = [round(b - a, 6) for a, b in itertools.pairwise(times)]
    # The first answer of each controller is echoed at once; then the interval again.
    assert gaps == [0.0, INTERVAL_S, 0.0, INTERVAL_S]
