"""Connection limits, the request-bytes budget and the read deadlines, without a node."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from rillet.broker.config import load_config
from rillet.broker.config.limits_config import parse_overrides
from rillet.broker.errors import ConfigError
from rillet.broker.network.connection_limits import ConnectionLimiter, Slot
from rillet.broker.network.read_shares import RequestBytesBudget
from rillet.broker.network.request_budget import ReadTimers


def test_per_ip_and_total_limits_with_overrides_and_a_node_reserve() -> None:
    limiter = ConnectionLimiter(5, 2, {"10.0.0.9": 4}, node_reserve=1)
    a = [limiter.admit("10.0.0.1", may_reserve=True) for _ in range(2)]
    assert all(x is not None and x.slot is Slot.COUNTED for x in a)
    reserved = limiter.admit("10.0.0.1", may_reserve=True)  # over the per-ip limit
    assert reserved is not None and reserved.slot is Slot.RESERVED
    assert limiter.admit("10.0.0.1", may_reserve=True) is None  # the reserve is full
    assert limiter.admit("10.0.0.1", may_reserve=False) is None
    b = [limiter.admit("10.0.0.9", may_reserve=False) for _ in range(3)]  # override: 4
    assert all(x is not None and x.slot is Slot.COUNTED for x in b)
    assert limiter.counted == 5
    assert limiter.admit("10.0.0.2", may_reserve=False) is None  # max_connections
    # A node authenticates on its reserved slot: it counts against nothing afterwards.
    limiter.promote_to_node(reserved)
    assert limiter.reserved == 0 and reserved.slot is Slot.NODE
    limiter.release(reserved)
    assert limiter.counted == 5 and limiter.reserved == 0
    # A counted connection that becomes a node frees its client slot.
    first = a[0]
    assert first is not None
    limiter.promote_to_node(first)
    assert limiter.counted == 4
    assert limiter.admit("10.0.0.1", may_reserve=False) is not None
    limiter.release(first)
    limiter.release(first)  # idempotent
    assert limiter.counted == 5 and limiter.refused == 3


def test_overrides_use_kafkas_format_and_bad_values_are_refused() -> None:
    assert parse_overrides("") == {}
    assert parse_overrides("10.0.0.1:5, host-b:0,[::1]:7") == {
        "10.0.0.1": 5,
        "host-b": 0,
        "::1": 7,
    }
    for bad in ("10.0.0.1", "10.0.0.1:x", "h:-1", ":3"):
        with pytest.raises(ConfigError):
            parse_overrides(bad)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("limits.queued_max_request_bytes", 1024, "queued_max_request_bytes must be"),
        ("limits.max_connections_per_ip", 0, "max_connections_per_ip must be"),
        ("limits.connections_max_idle_ms", 0, "connections_max_idle_ms must be"),
        ("limits.frame_read_timeout_ms", -5, "frame_read_timeout_ms must be"),
        ("limits.node_connection_reserve", -1, "node_connection_reserve"),
        ("limits.max_connections_per_ip_overrides", "nonsense", "not host:count"),
    ],
)
def test_limits_are_range_checked_at_start_up(key: str, value: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(None, {key: value})


def test_the_budget_serves_waiters_in_order_and_survives_cancellation() -> None:
    async def main() -> None:
        budget = RequestBytesBudget(100)
        order: list[str] = []
        await budget.take(80)

        async def want(name: str, n: int) -> None:
            await budget.take(n)
            order.append(name)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(want, "a", 50)
            await trio.testing.wait_all_tasks_blocked()
            cancelled = trio.CancelScope()

            async def doomed() -> None:
                with cancelled:
                    await budget.take(10)
                    order.append("doomed")

            nursery.start_soon(doomed)
            nursery.start_soon(want, "b", 10)
            await trio.testing.wait_all_tasks_blocked()
            assert order == []  # "b" fits, but waits behind "a": first come, first served
            cancelled.cancel()
            await trio.testing.wait_all_tasks_blocked()
            budget.give(30)  # 50 free: "a" gets them all
            await trio.testing.wait_all_tasks_blocked()
            assert order == ["a"]
            budget.give(50)
        assert order == ["a", "b"] and budget.available_bytes == 40

    trio.run(main)


def test_read_timers_idle_frame_and_authentication_deadlines() -> None:
    timers = ReadTimers(idle_timeout_s=10, frame_timeout_s=2, now=0)
    assert timers.deadline() == 10 and timers.expired(10).idle
    timers.on_received(1)
    timers.on_decoded(1, pending_bytes=5, frames=0)  # a frame started at 1
    assert timers.deadline() == 3
    assert not timers.expired(3).idle and "frame_read_timeout_ms" in str(timers.expired(3))
    timers.on_received(2.5)
    timers.on_decoded(2.5, pending_bytes=9, frames=0)  # still the same frame: no reset
    assert timers.deadline() == 3
    timers.on_decoded(2.9, pending_bytes=3, frames=1)  # it finished; the next one started
    assert timers.deadline() == pytest.approx(4.9)
    timers.on_decoded(3, pending_bytes=0, frames=1)
    assert timers.deadline() == 12.5
    timers.must_authenticate_by = 5
    assert timers.deadline() == 5 and "authenticate" in str(timers.expired(5))
