"""race(): the trio driver of StaggeredRace, with in-memory attempts under virtual time."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from rillet.client.errors import (
    AuthorizationFailedError,
    ClientTimeoutError,
    ConnectionFailedError,
)
from rillet.client.race_runner import race

RETRY = (ConnectionFailedError, ClientTimeoutError)


class Nodes:
    """Attempts that answer after a delay (None: never), fail, or refuse; records starts."""

    def __init__(self, behaviour: dict[str, float | Exception | None]) -> None:
        self.behaviour = behaviour
        self.started: dict[str, float] = {}
        self.cancelled: set[str] = set()

    async def attempt(self, name: str) -> str:
        self.started[name] = trio.current_time()
        what = self.behaviour[name]
        try:
            if isinstance(what, Exception):
                await trio.sleep(0.01)
                raise what
            if what is None:
                await trio.sleep_forever()
            else:
                await trio.sleep(what)
        except trio.Cancelled:
            self.cancelled.add(name)
            raise
        return name


async def test_a_silent_first_node_is_joined_after_the_stagger(
    autojump_clock: trio.testing.MockClock,
) -> None:
    nodes = Nodes({"paused": None, "up": 0.005, "spare": 0.005})
    start = trio.current_time()
    assert await race(["paused", "up", "spare"], nodes.attempt, 0.25, RETRY, "x") == "up"
    assert trio.current_time() - start == pytest.approx(0.255)
    assert nodes.started["up"] - start == pytest.approx(0.25)
    assert "spare" not in nodes.started  # "up" answered before its turn
    assert nodes.cancelled == {"paused"}  # the loser is dropped, not left running


async def test_a_failure_moves_on_at_once(autojump_clock: trio.testing.MockClock) -> None:
    nodes = Nodes({"down": ConnectionFailedError("refused"), "up": 0.005})
    start = trio.current_time()
    assert await race(["down", "up"], nodes.attempt, 10.0, RETRY, "x") == "up"
    assert nodes.started["up"] - start == pytest.approx(0.01)


async def test_an_answer_that_is_an_error_ends_the_race(
    autojump_clock: trio.testing.MockClock,
) -> None:
    nodes = Nodes({"strict": AuthorizationFailedError("no"), "slow": 1.0})
    with pytest.raises(AuthorizationFailedError):
        await race(["strict", "slow"], nodes.attempt, 0.001, RETRY, "x")
    assert nodes.cancelled == {"slow"}


async def test_when_every_node_fails_all_their_reasons_are_given(
    autojump_clock: trio.testing.MockClock,
) -> None:
    nodes = Nodes({"a": ConnectionFailedError("a refused"), "b": ClientTimeoutError("b slow")})
    with pytest.raises(ClientTimeoutError, match="no node reachable: a refused; b slow"):
        await race(["a", "b"], nodes.attempt, 0.25, RETRY, "no node reachable")
    with pytest.raises(ConnectionFailedError, match="no node to try"):
        await race([], nodes.attempt, 0.25, RETRY, "no node to try")


async def test_every_silent_node_is_tried_each_a_stagger_later(
    autojump_clock: trio.testing.MockClock,
) -> None:
    nodes = Nodes({"p1": None, "p2": None, "up": 0.0})
    start = trio.current_time()
    assert await race(["p1", "p2", "up"], nodes.attempt, 0.25, RETRY, "x") == "up"
    assert trio.current_time() - start == pytest.approx(0.5)
    assert nodes.cancelled == {"p1", "p2"}
