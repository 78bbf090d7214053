"""The trio driver of :class:`StaggeredRace`: runs the attempts it asks for, in a nursery
of its own, and cancels the ones still running once one has won.

Used twice by the cluster client: to open a control connection to any node (the attempt is
the connect phase: TCP, TLS, SASL login, a first answer) and to send a request that is safe
to repeat to any node (the attempt is connect and request; the stagger is the hedge delay).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

import trio

from rillet.client.errors import ConnectionFailedError, RilletError
from rillet.client.staggered_race import StaggeredRace

T = TypeVar("T")
R = TypeVar("R")


class _Outcomes(Generic[R]):
    """What the attempts reported, and an event set whenever one reports."""

    def __init__(self) -> None:
        self.changed = trio.Event()
        self.result: list[R] = []  # the winner's, once there is one
        self.error: Exception | None = None  # an error that ends the race (not a retry)
        self.failures: list[RilletError] = []


async def race(
    candidates: Sequence[T],
    attempt: Callable[[T], Awaitable[R]],
    stagger_s: float,
    retry_on: tuple[type[RilletError], ...],
    what: str,
) -> R:
    """The result of the first ``attempt(candidate)`` to return, starting one more candidate
    every ``stagger_s`` (and at once after a failure) while none has.

    An attempt raising one of ``retry_on`` has failed (the next candidate starts); any other
    exception ends the race and is raised. When every candidate failed, the last failure's
    type is raised with all their messages, prefixed by ``what``.
    """
    plan = StaggeredRace(candidates, stagger_s, trio.current_time())
    outcomes: _Outcomes[R] = _Outcomes()

    async def run(index: int, candidate: T) -> None:
        try:
            result = await attempt(candidate)
        except retry_on as exc:
            plan.failed(index, trio.current_time())
            outcomes.failures.append(exc)
        except Exception as exc:  # an answer that ends the race (e.g. not authorized)
            plan.succeeded(index)
            if outcomes.error is None and not outcomes.result:
                outcomes.error = exc
        else:
            if plan.succeeded(index):
                outcomes.result.append(result)
        outcomes.changed.set()

    async with trio.open_nursery() as nursery:
        while True:
            for index, candidate in plan.due(trio.current_time()):
                nursery.start_soon(run, index, candidate)
            if plan.finished:
                break
            wake_s = plan.next_start_s
            with trio.move_on_at(math.inf if wake_s is None else wake_s):
                await outcomes.changed.wait()
            outcomes.changed = trio.Event()
        nursery.cancel_scope.cancel()  # the attempts that lost
    if outcomes.result:
        return outcomes.result[0]
    if outcomes.error is not None:
        raise outcomes.error
    if not outcomes.failures:
        raise ConnectionFailedError(f"{what}: no node to try")
    last = outcomes.failures[-1]
    message = "; ".join(str(f) for f in outcomes.failures)
    raise type(last)(f"{what}: {message}") from last
