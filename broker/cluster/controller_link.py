"""A broker's line to the active controller, wherever it runs.

The controller lives on whichever voter leads the Raft quorum. The link sends a request to
the voter it believes is the controller (a hint from the local quorum, or from the last
NOT_CONTROLLER answer), and on NOT_CONTROLLER, a broken connection or a timeout tries again
on the hinted voter or the next one, with bounded exponential backoff, until the caller's
deadline. When to try again and when to give up is the sans-I/O
:class:`~rillet.broker.cluster.controller_call.ControllerCall` (the replication simulation
runs it too); this driver makes the attempts. An unanswered attempt is abandoned at once
when the local quorum names another leader (on its leadership event; a node without a
quorum polls), and a broker waiting between heartbeats (:meth:`ControllerLink.pause`) goes
on at once when it names a leader other than the one that answered last. One connection per
voter is kept and replaced when it breaks; each new one first runs the node handshake
(broker/cluster/node_handshake.py), so it may carry internal requests.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import trio

from rillet.broker.cluster.controller_call import (
    ControllerCall,
    Finished,
    Retry,
    Send,
    VoterChoice,
    not_controller_hint,
)
from rillet.broker.errors import BrokerError, ControllerUnreachable
from rillet.client.connection import BrokerConnection
from rillet.client.errors import RilletError
from rillet.wire.request import Request

R = TypeVar("R")

log = logging.getLogger(__name__)

# How often an unanswered attempt checks whether the controller moved, on a node whose
# quorum cannot say when its leadership changes.
HINT_POLL_S = 0.05


class _ControllerMoved(BrokerError):
    """An attempt abandoned because the local quorum now names another leader (internal:
    ``call`` catches it and tries the new leader)."""


class ControllerLink:
    def __init__(
        self,
        nursery: trio.Nursery,
        voters: dict[int, tuple[str, int]],
        request_timeout_s: float,
        local_hint: Callable[[], int | None] | None = None,
        client_id: str = "rillet-broker",
        authenticate: Callable[[BrokerConnection], Awaitable[None]] | None = None,
        tls: Callable[[], ssl.SSLContext | None] = lambda: None,
        local_change: Callable[[], Awaitable[object]] | None = None,
    ) -> None:
        """``tls``: the context for connections to the controller (None: plaintext).
        ``local_change()`` returns at the local quorum's next leadership change (what
        ``local_hint`` names may then differ)."""
        self._nursery = nursery
        self._tls = tls
        self._voters = dict(sorted(voters.items()))
        self._request_timeout_s = request_timeout_s
        self._local_hint = local_hint
        self._local_change = local_change
        self._client_id = client_id
        # The node handshake run on every new connection before it carries a request:
        # controllers serve internal apis only on connections authenticated as a node.
        self._authenticate = authenticate
        self._choice = VoterChoice(self._voters)
        self._cut_for: int | None = None  # the leader the last pause was cut short for
        self._connections: dict[int, BrokerConnection] = {}

    def learn_voter(self, node_id: int, address: tuple[str, int]) -> None:
        """A voter added at run time (its listener, from the Raft configuration): it may
        become the controller, so requests may go there too."""
        if self._voters.get(node_id) != address:
            self._voters = dict(sorted({**self._voters, node_id: address}.items()))
            self._choice.learn_voter(node_id)

    @property
    def controller_hint(self) -> int | None:
        """The voter believed to be the controller, or None."""
        return self._choice.hint(self._local())

    def _local(self) -> int | None:
        return self._local_hint() if self._local_hint is not None else None

    async def _connection(self, voter: int) -> BrokerConnection:
        conn = self._connections.get(voter)
        if conn is None or conn.closed:
            host, port = self._voters[voter]
            conn = BrokerConnection(host, port, client_id=self._client_id, ssl_context=self._tls())
            await conn.connect(self._nursery, self._request_timeout_s)
            if self._authenticate is not None:
                await self._authenticate(conn)
            self._connections[voter] = conn
        return conn

    async def call(
        self,
        request: Request[R],
        deadline_s: float,
        not_controller: Callable[[Any], int | None] | None = None,
    ) -> R:
        """Send ``request`` to the controller and return its answer.

        ``not_controller(response)`` returns the controller hint (or -1) when the answer says
        "not the controller"; by default the response's ``error_code`` and ``controller_id``
        fields are read. Raises ControllerUnreachable after ``deadline_s`` seconds.
        """
        outcome = await self.call_outcome(request, deadline_s, not_controller)
        assert outcome.response is not None  # no answer raises
        return outcome.response

    async def call_outcome(
        self,
        request: Request[R],
        deadline_s: float,
        not_controller: Callable[[Any], int | None] | None = None,
    ) -> Finished[R]:
        """:meth:`call`, with whether an earlier attempt went unanswered (a refusal then
        does not prove the request never takes effect: ``Finished.after_unanswered``)."""
        check = not_controller or not_controller_hint
        progress: ControllerCall[R] = ControllerCall(deadline_s)
        step: Send | Retry | Finished[R] = progress.start()
        with trio.move_on_after(deadline_s):
            while True:
                if isinstance(step, Retry):
                    await trio.sleep_until(step.at_s)
                voter = self._choice.target(self._local())
                try:
                    conn = await self._connection(voter)
                    response = await self._request(conn, request, voter)
                except _ControllerMoved as moved:
                    step = progress.moved(voter, str(moved))  # the new controller is known
                    continue
                except RilletError as exc:
                    conn_failed = self._connections.pop(voter, None)
                    if conn_failed is not None:
                        conn_failed.close()
                    self._choice.failed(voter)
                    step = progress.failed(voter, str(exc), trio.current_time())
                else:
                    hint = check(response)
                    self._choice.answered(voter, hint)
                    step = progress.answered(voter, response, hint is not None, trio.current_time())
                    if isinstance(step, Finished):
                        return step
        raise ControllerUnreachable(progress.unreachable_message())

    async def _request(self, conn: BrokerConnection, request: Request[R], voter: int) -> R:
        """One attempt at ``voter``, abandoned as soon as the local quorum names another
        leader. A voter that was cut off or died with the request unanswered would otherwise
        hold it for a whole request timeout — longer than a new controller waits for the
        brokers' first heartbeats before it fences them (chaos seed 37)."""
        answered: list[R] = []
        error: RilletError | None = None
        moved = False
        async with trio.open_nursery() as nursery:

            async def attempt() -> None:
                nonlocal error
                try:
                    answered.append(await conn.request(request, self._request_timeout_s))
                except RilletError as exc:  # raised below, not as an exception group
                    error = exc
                nursery.cancel_scope.cancel()

            async def watch() -> None:
                nonlocal moved
                while not self._local_leader_other_than(voter):
                    await self._local_changed()
                moved = True
                nursery.cancel_scope.cancel()

            nursery.start_soon(attempt)
            nursery.start_soon(watch)
        if error is not None:
            raise error
        if moved:
            raise _ControllerMoved("the local quorum names another leader")
        return answered[0]

    async def pause(self, seconds: float) -> None:
        """Wait ``seconds``, or less: until the local quorum names a leader other than the
        voter whose answer was taken last (once per leader named: a quorum that names a
        voter which does not answer as the controller yet must not make a loop of it). A
        broker's heartbeat loop waits here, so that it reaches a new controller at once
        instead of a heartbeat interval later (that controller counts the lease of a broker
        it has not heard from since the quorum last heard its node; a deposed controller's
        broker had little of it left)."""
        with trio.move_on_after(seconds):
            if self._local_hint is None or self._local_change is None:
                await trio.sleep_forever()
            while True:
                local = self._local_hint()
                answered_by = self._choice.answered_by
                if self._local_leader_other_than(answered_by) and local != self._cut_for:
                    self._cut_for = local
                    return
                await self._local_change()

    def _local_leader_other_than(self, voter: int | None) -> bool:
        local = self._local()
        return local is not None and local != voter and local in self._voters

    async def _local_changed(self) -> None:
        """Until the local quorum's leadership may have changed."""
        if self._local_change is None:
            await trio.sleep(HINT_POLL_S)
        else:
            await self._local_change()

    def close(self) -> None:
        for conn in self._connections.values():
            conn.close()
        self._connections.clear()
