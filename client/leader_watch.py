"""Leaving a partition leader that stopped answering, as soon as the metadata names another.

A node that is paused (SIGSTOP), cut off or overloaded keeps its TCP connections open, so a
request to it is neither answered nor failed: without help a client waits for its request
timeout (30 s by default), and its retry may go back to the same node. Meanwhile the
controller fences the node after ``broker_session_timeout_ms`` and elects new leaders.

This module decides when a client should look, and what to give up, without doing any I/O
(time is an argument, actions are returned): every leader-bound request in flight is
registered with the node it went to and the leader epoch of each partition it is about. Once
one has waited longer than its expected wait plus ``leader_check_ms``, the client's driver
refreshes metadata now and then (``next_refresh_at``: backoff doubling up to
``leader_check_ms`` or 250 ms, whichever is less) from nodes that are not stalled. After
every metadata update, :meth:`LeaderWatch.moved` names the partitions whose metadata now has
a different leader or a higher leader epoch than their request was sent under: the
request's owner abandons them and retries them at the leader the metadata names (an
idempotent producer resends the very same batch, with the same producer id, epoch and
sequence, so the new leader writes it at most once). A retry follows the metadata, whose
leader epochs never go backwards, so it never returns to a node the metadata no longer names
as the leader.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from rillet.client.errors import RilletError

TP = tuple[str, int]
# What the metadata says of a partition now: (leader node id or None, leader epoch).
LeaderOf = Callable[[TP], tuple[int | None, int]]
OnMoved = Callable[[list[TP]], None]

DEFAULT_LEADER_CHECK_MS = 500
FIRST_REFRESH_BACKOFF_S = 0.1
# The longest wait between two refreshes while a request stays stalled: the new leader is
# seen at most this long after the controller names it (a metadata request costs the nodes
# little; stalls are rare and short).
MAX_REFRESH_BACKOFF_S = 0.25
# A node whose stalled request was abandoned stays "stalled" this long: it still answers
# nothing, and a metadata request sent to it would wait for the whole request timeout.
SUSPECT_S = 10.0


class LeaderMovedError(RilletError):
    """A request was abandoned because the metadata named a new leader for its partitions
    while it was in flight; retry at the new leader (nothing to back off from)."""

    def __init__(self, message: str, partitions: Iterable[TP] = ()) -> None:
        super().__init__(message)
        self.partitions = list(partitions)


def leader_moved(sent_to: int, sent_epoch: int, leader: int | None, epoch: int) -> bool:
    """True when a request sent to ``sent_to`` under ``sent_epoch`` is no longer bound for
    the partition's leader: the metadata names another node, or a newer leader epoch. An
    unknown leader at the same epoch is not a move (a node forgets a leader it was told is
    stale; the next metadata answer decides)."""
    if epoch > sent_epoch:
        return True
    return leader is not None and leader != sent_to


@dataclass(slots=True)
class _Watched:
    node_id: int
    epochs: dict[TP, int]  # partitions still bound to this request -> epoch when sent
    stalled_at_s: float  # when it counts as stalled
    on_moved: OnMoved


class LeaderWatch:
    """The leader-bound requests in flight of one client, and when to look for new leaders."""

    def __init__(
        self,
        leader_check_s: float = DEFAULT_LEADER_CHECK_MS / 1000,
        first_backoff_s: float = FIRST_REFRESH_BACKOFF_S,
    ) -> None:
        if leader_check_s <= 0:
            raise ValueError("leader_check_ms must be positive")
        self.leader_check_s = leader_check_s
        self._first_backoff_s = min(first_backoff_s, leader_check_s)
        self._backoff_s = self._first_backoff_s
        self._not_before_s = 0.0  # no refresh before this (backoff after the last one)
        self._watched: dict[int, _Watched] = {}
        self._suspects: dict[int, float] = {}  # node id -> avoided until
        self._next_token = 1

    def __len__(self) -> int:
        return len(self._watched)

    def watch(
        self,
        node_id: int,
        epochs: Mapping[TP, int],
        now_s: float,
        on_moved: OnMoved,
        expected_wait_s: float = 0.0,
    ) -> int:
        """Register a request to ``node_id`` about ``epochs`` ({partition: leader epoch it
        was sent under}); ``expected_wait_s`` is how long it may rightly take (a fetch's
        long poll). Returns a token for :meth:`unwatch`."""
        token = self._next_token
        self._next_token += 1
        if not epochs:
            return token  # about no partition: nothing can move
        stalled_at = now_s + expected_wait_s + self.leader_check_s
        self._watched[token] = _Watched(node_id, dict(epochs), stalled_at, on_moved)
        return token

    def unwatch(self, token: int) -> None:
        """The request ended (answered, failed or abandoned)."""
        self._watched.pop(token, None)

    def stalled_nodes(self, now_s: float) -> set[int]:
        """Nodes with a request outstanding past its expected wait plus ``leader_check_ms``,
        or whose stalled request was abandoned less than SUSPECT_S ago: metadata is better
        asked elsewhere."""
        nodes = {w.node_id for w in self._watched.values() if w.stalled_at_s <= now_s}
        for node_id, until in list(self._suspects.items()):
            if until > now_s:
                nodes.add(node_id)
            else:
                del self._suspects[node_id]
        return nodes

    def stalled_topics(self, now_s: float) -> set[str]:
        return {tp[0] for w in self._watched.values() if w.stalled_at_s <= now_s for tp in w.epochs}

    def next_refresh_at(self) -> float | None:
        """When the driver should refresh metadata next (None: nothing in flight)."""
        if not self._watched:
            return None
        first_stall = min(w.stalled_at_s for w in self._watched.values())
        return max(first_stall, self._not_before_s)

    def refreshed(self, now_s: float) -> None:
        """A refresh for stalled requests was made (or tried): back off before the next."""
        self._not_before_s = now_s + self._backoff_s
        self._backoff_s = min(self._backoff_s * 2, self.leader_check_s, MAX_REFRESH_BACKOFF_S)

    def moved(self, leader_of: LeaderOf, now_s: float) -> list[tuple[OnMoved, list[TP]]]:
        """After a metadata update: for each request, the partitions whose leader moved.

        Those partitions stop being watched (each is reported once); a request left with
        none is forgotten. The caller runs each ``on_moved`` with its partitions, newest
        request first: owners that put work back at the front of a queue keep its order.
        """
        actions: list[tuple[OnMoved, list[TP]]] = []
        for token, w in reversed(list(self._watched.items())):
            gone = []
            for tp, sent_epoch in w.epochs.items():
                leader, epoch = leader_of(tp)
                if leader_moved(w.node_id, sent_epoch, leader, epoch):
                    gone.append(tp)
            if not gone:
                continue
            for tp in gone:
                del w.epochs[tp]
            if w.stalled_at_s <= now_s:
                self._suspects[w.node_id] = now_s + SUSPECT_S
            if not w.epochs:
                del self._watched[token]
            actions.append((w.on_moved, gone))
        if actions:
            # Something moved: look again soon if other requests are still stuck.
            self._backoff_s = self._first_backoff_s
        return actions
