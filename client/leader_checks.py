"""The trio side of :class:`LeaderWatch`: one ClusterClient's leader-bound requests.

Thin on purpose: leader_watch.py decides when to look and what moved; this module only
sleeps until the decided time, asks the cluster client for a metadata refresh (of the
stalled topics, from nodes that are not stalled) and, after every metadata update, runs
the owners' ``on_moved`` callbacks. ``leader_request`` turns a move into a cancelled wait
and a :class:`LeaderMovedError` for callers with a single request to retry.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

import trio

from rillet.client.connection import BrokerConnection
from rillet.client.errors import ClientClosedError, ClientTimeoutError, ConnectionFailedError
from rillet.client.leader_watch import TP, LeaderMovedError, LeaderWatch, OnMoved
from rillet.client.metadata import ClusterMetadata
from rillet.wire.request import Request

R = TypeVar("R")

log = logging.getLogger(__name__)

RefreshFn = Callable[[frozenset[str], set[int]], Awaitable[None]]


class LeaderChecks:
    """Runs a LeaderWatch: ``refresh(topics, avoid)`` refreshes metadata; ``nursery()`` is
    where the background check runs (None once the client is closing)."""

    def __init__(
        self,
        watch: LeaderWatch,
        metadata: ClusterMetadata,
        refresh: RefreshFn,
        nursery: Callable[[], trio.Nursery | None],
    ) -> None:
        self._watch = watch
        self._metadata = metadata
        self._refresh = refresh
        self._nursery = nursery
        self._wakeup = trio.Event()
        self._sleeping_until = float("inf")  # when the check loop wakes up by itself
        self._running = False

    def watch_request(
        self,
        node_id: int,
        partitions: Iterable[TP],
        on_moved: OnMoved,
        expected_wait_s: float = 0.0,
    ) -> int:
        md = self._metadata
        epochs = {(tp[0], tp[1]): md.leader_epoch(tp) for tp in partitions}
        now = trio.current_time()
        token = self._watch.watch(node_id, epochs, now, on_moved, expected_wait_s)
        self._ensure_running()
        if now + expected_wait_s + self._watch.leader_check_s < self._sleeping_until:
            self._wakeup.set()  # due before the loop would look: it must sleep less
        return token

    async def leader_request(
        self,
        conn: BrokerConnection,
        node_id: int,
        request: Request[R],
        partitions: Iterable[TP],
        timeout_s: float,
        expected_wait_s: float = 0.0,
    ) -> R:
        moved: list[TP] = []
        with trio.CancelScope() as scope:

            def on_moved(tps: list[TP]) -> None:
                moved.extend(tps)
                scope.cancel()

            token = self.watch_request(node_id, partitions, on_moved, expected_wait_s)
            try:
                return await conn.request(request, timeout_s)
            finally:
                self._watch.unwatch(token)
        raise LeaderMovedError(
            f"abandoned a request to node {node_id}: the metadata names a new leader for "
            + ", ".join(f"{t}-{p}" for t, p in moved),
            moved,
        )

    def check(self) -> None:
        """After a metadata update: tell the owners of requests whose leader moved."""
        md = self._metadata
        for on_moved, tps in self._watch.moved(
            lambda tp: (md.leader_for(tp), md.leader_epoch(tp)), trio.current_time()
        ):
            try:
                on_moved(tps)
            except Exception:  # a bug in one owner must not stop the others' retries
                log.exception("handling a leader change of %s failed", tps)

    def _ensure_running(self) -> None:
        nursery = self._nursery()
        if self._running or nursery is None:
            return
        self._running = True
        nursery.start_soon(self._run)

    async def _run(self) -> None:
        """Refresh metadata while a leader-bound request is stalled (bounded: backoff up to
        ``leader_check_ms``; from nodes that are not stalled; only the stalled topics)."""
        watch = self._watch
        try:
            while True:
                self._wakeup = trio.Event()
                due = watch.next_refresh_at()
                # Requests come and go at the producer's pace: the loop is woken only when a
                # new one is due earlier than this, and looks again when this time comes.
                self._sleeping_until = float("inf") if due is None else due
                with trio.move_on_at(self._sleeping_until):
                    await self._wakeup.wait()
                    continue  # an earlier request came: compute the time again
                now = trio.current_time()
                topics = watch.stalled_topics(now)
                if not topics:
                    continue  # the request that was due has been answered meanwhile
                watch.refreshed(now)
                avoid = watch.stalled_nodes(now)
                try:
                    await self._refresh(frozenset(topics), avoid)
                except (ConnectionFailedError, ClientTimeoutError) as exc:
                    log.debug("leader check failed: %s", exc)
                else:
                    log.debug(
                        "leader check: metadata of %s (avoiding nodes %s) in %.3f s",
                        ", ".join(sorted(topics)),
                        sorted(avoid),
                        trio.current_time() - now,
                    )
        except ClientClosedError:
            pass  # the client is closing
        finally:
            self._running = False
            self._sleeping_until = float("inf")
