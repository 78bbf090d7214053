"""Sending a request that is safe to repeat to more than one node, the first answer winning.

Why: a node that is paused or wedged keeps its connections open and answers nothing, and
the client cannot tell it from a slow one. For a request that only reads (metadata, a
coordinator's address, descriptions), asking a second node when the first has not answered
within a short hedge delay costs one more small request; waiting costs the request timeout.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import trio

from rillet.client.connection import BrokerConnection
from rillet.client.errors import ClientTimeoutError, ConnectionFailedError, LeaderNotAvailableError
from rillet.client.node_choice import Candidate
from rillet.client.race_runner import race

R = TypeVar("R")
# Answers after which the next node is asked (and at once); any other error is the answer.
PASSED_OVER = (ConnectionFailedError, ClientTimeoutError, LeaderNotAvailableError)


async def hedged_request(
    candidates: Sequence[Candidate],
    connect: Callable[[Candidate], Awaitable[BrokerConnection]],
    send: Callable[[BrokerConnection], Awaitable[R]],
    delay_s: float,
) -> tuple[R, tuple[str, int]]:
    """``send`` on the connection to the first candidate; while no node has answered, to the
    next one as well every ``delay_s`` (at once when one fails), each at most once. Returns
    the first answer and the address it came from.

    The connection of a node that was asked and did not answer first is closed: it may be
    paused, so later requests should not go to it, and its late answer is not wanted. A node
    that refuses the whole request with LEADER_NOT_AVAILABLE (not caught up since it started)
    is passed over too, but keeps its connection: it answers, it is just not ready yet.
    """

    async def ask(candidate: Candidate) -> tuple[R, tuple[str, int]]:
        conn = await connect(candidate)
        try:
            response = await send(conn)
        except (ConnectionFailedError, ClientTimeoutError, trio.Cancelled):
            conn.close()
            raise
        return response, (conn.host, conn.port)

    return await race(candidates, ask, delay_s, PASSED_OVER, "no node reachable")
