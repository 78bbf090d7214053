"""A group member's link to its coordinator (the controller node): find it, follow it when it
moves, and keep trying what must not be lost.

Heartbeats have their own loop, so one of their calls fails fast: a "not me" answer
(NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE) makes the link find the coordinator again within
the request timeout, anything else is raised. Offset commits and the LeaveGroup of a closing
member are different: a commit dropped while controllers change makes the next owner deliver
the partition's records again, and a leave that no controller took keeps the member
registered (its partitions unconsumed) until its session expires. They are called with a
deadline (``until_s``) and retried until a coordinator takes them: while no controller is
known, after a lost connection or a timeout, and on "not me" or "timed out" answers. Both
are safe to repeat (the same offsets, the same member). A fenced member's call
(ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID) is answered, not retried: its partitions belong to
someone else now, and committing for them would be wrong.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

import trio

from rillet.client.errors import (
    BrokerError,
    ClientClosedError,
    ClientTimeoutError,
    ConnectionFailedError,
    RilletError,
    error_for,
)
from rillet.wire.error_codes import ErrorCode
from rillet.wire.request import Request

R = TypeVar("R")

log = logging.getLogger(__name__)

# "Not me": the coordinator moved or is not known yet; find it again.
REFIND = frozenset(
    {ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_CONTROLLER}
)
# Also retried by calls that must not be lost: the controller could not commit in time
# (its Raft leadership was changing) or is still loading.
TRANSIENT = REFIND | {ErrorCode.REQUEST_TIMED_OUT, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS}
FIRST_BACKOFF_S = 0.02
MAX_BACKOFF_S = 1.0


class Requester(Protocol):
    """What the link needs of a connection (BrokerConnection, or a fake in tests)."""

    @property
    def closed(self) -> bool: ...

    async def request(self, request: Request[R], timeout_s: float) -> R: ...


def transient_failure(exc: BaseException) -> bool:
    """A failure that says nothing about the call itself: no coordinator reachable or known
    right now. Retried by calls with a deadline."""
    if isinstance(exc, ConnectionFailedError | ClientTimeoutError | ClientClosedError):
        return True
    return isinstance(exc, BrokerError) and exc.code in TRANSIENT


def answer_code(response: Any) -> ErrorCode:
    return ErrorCode.from_wire(getattr(response, "error_code", ErrorCode.NONE))


class CoordinatorLink:
    """Calls to one group's coordinator; ``find`` returns a connection to it."""

    def __init__(
        self,
        find: Callable[[], Awaitable[Requester]],
        group_id: str,
        request_timeout_s: float,
        stopped: Callable[[], bool] = lambda: False,
    ) -> None:
        self._find = find
        self.group_id = group_id
        self._timeout_s = request_timeout_s
        self._stopped = stopped  # the client is closing for good: nothing left to reach
        self._conn: Requester | None = None

    async def connection(self) -> Requester:
        if self._conn is None or self._conn.closed:
            self._conn = await self._find()
        return self._conn

    def forget(self) -> None:
        """The coordinator may have moved: find it again next time."""
        self._conn = None

    async def call(
        self,
        request: Request[R],
        until_s: float | None = None,
        retry_answer: Callable[[Any], bool] | None = None,
    ) -> R:
        """Send ``request`` to the coordinator and return its answer.

        Without ``until_s``: "not me" answers are retried (finding the coordinator again)
        within the request timeout; failures are raised. With ``until_s`` (a
        ``trio.current_time()`` deadline): every transient failure or answer, and every
        answer ``retry_answer`` picks, is retried with backoff until the deadline, then the
        last failure is raised (or the last answer returned).
        """
        persistent = until_s is not None
        deadline = until_s if until_s is not None else trio.current_time() + self._timeout_s
        retry_codes = TRANSIENT if persistent else REFIND
        backoff = FIRST_BACKOFF_S
        while True:
            remaining = deadline - trio.current_time()
            try:
                conn = await self.connection()
                response = await conn.request(request, min(self._timeout_s, max(remaining, 0.05)))
            except RilletError as exc:
                self.forget()
                if not persistent or self._stopped() or not transient_failure(exc):
                    raise
                outcome: R | BaseException = exc
            else:
                code = answer_code(response)
                again = code in retry_codes or (
                    persistent and retry_answer is not None and retry_answer(response)
                )
                if not again:
                    return response
                if code in REFIND:
                    self.forget()
                outcome = response
            if trio.current_time() + backoff > deadline:
                if isinstance(outcome, BaseException):
                    raise outcome
                if answer_code(outcome) in REFIND:
                    raise error_for(answer_code(outcome), f"coordinator of {self.group_id}")
                return outcome
            log.debug(
                "%s to the coordinator of %s: retrying", type(request).__name__, self.group_id
            )
            await trio.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF_S)
