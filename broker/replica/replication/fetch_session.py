"""Incremental fetch sessions between a follower and a leader (the idea of Kafka's KIP-227).

A follower of thousands of partitions used to name every one of them in every fetch, and
the leader answered every one, records or not: each round encoded, decoded and applied
thousands of entries that said nothing new. With a session, the two ends remember the last
exchange on their connection:

- the follower's fetch names only the partitions whose fetch position changed (offset,
  epoch, log start, size limit) since its previous fetch was answered, and the partitions it
  no longer follows (``forgotten``); its first fetch on a connection names all of them;
- the leader keeps each partition's latest position and answers only partitions with news:
  records, an error, a divergence, or a high watermark, log start, log end or leader epoch
  other than in its last answer for that partition;
- the leader also reads only what may have news. A partition whose last read found the
  follower caught up (nothing to send, no error) is *quiet*: it is skipped until its replica
  reports a change (:attr:`NewsSource.news`: an append, a high-watermark move, a role or
  ISR change, a deletion) or the follower names it again. A leader of thousands of
  partitions therefore spends a round on the few that changed, not on all of them;
- a follower stays in the ISR while caught up, and a quiet partition's follower is caught
  up at every round that finds it still quiet (its replica has no news, so the log end has
  not moved past the follower). The replica is told so once, when the partition goes
  quiet: its ISR check then reads the session's latest round time (``SessionRounds``)
  instead of a re-read of every quiet partition every second, which at 10,000 partitions
  was most of what a leader read. When the partition is read again (news, named,
  forgotten, a new session), the replica is told it resumed and keeps the last round that
  found it quiet as its caught-up time. A rare full read (``refresh_ms``, 30 s) remains,
  as a safety net only.

The session lives as long as the connection: a broken connection ends it at both ends, and
a new one starts with a full fetch, so no session ids or epochs travel. An incremental fetch
the leader has no session for (it cannot happen on one connection, but a peer may be wrong)
is answered FETCH_SESSION_ID_NOT_FOUND and the follower starts over with a full fetch.

Both ends are pure state (no I/O): the replica fetcher and the request dispatcher drive them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Protocol

from rillet.broker.replica.replication.follower_fetch_answer import is_diverging
from rillet.broker.replica.replication.session_rounds import SessionRounds
from rillet.wire.error_codes import ErrorCode
from rillet.wire.frame import blob_length
from rillet.wire.messages import (
    FetchForgotten,
    FetchPartition,
    FetchPartitionResponse,
    FetchRequest,
)

TP = tuple[str, int]

# Partitions one session may hold: more than a node can host (a bound on what a peer can
# make the leader remember on one connection).
MAX_SESSION_PARTITIONS = 200_000


def partition_limit(setting: int) -> int:
    """The partitions per fetch a ``replication.fetch_max_partitions`` setting allows
    (-1: no limit but the session's own)."""
    return setting if setting > 0 else MAX_SESSION_PARTITIONS


class NewsSource(Protocol):
    """A partition replica as a session sees it: ``news`` changes whenever an answer to a
    caught-up follower could change."""

    @property
    def news(self) -> int: ...

    @property
    def fetch_state(self) -> tuple[int, int, int, int]:
        """(high watermark, log start, log end, leader epoch) now: what an answer says."""
        ...

    def follower_quiet(self, replica_id: int, rounds: SessionRounds) -> None:
        """Follower ``replica_id`` is caught up here and the partition went quiet in its
        session: it stays caught up as of ``rounds.last_ms`` until :meth:`follower_resumed`."""
        ...

    def follower_resumed(self, replica_id: int, rounds: SessionRounds) -> None:
        """The partition is read again in that session (``rounds.last_ms`` is still the
        last round that found it quiet): back to what reads report."""
        ...


class FetchSessionError(Exception):
    """An incremental fetch the leader cannot apply (no session, or too many partitions)."""


class FollowerFetchSession:
    """The follower's end: what its next fetch on this connection names.

    A fetch names at most ``max_partitions``: the first one on a connection of a follower of
    thousands of partitions (and the rounds after thousands were created) would otherwise
    encode, decode and answer them all in one stretch of each event loop. The rest are
    named by the next fetches, which should then not wait (:attr:`more_to_name`)."""

    def __init__(self, max_partitions: int = MAX_SESSION_PARTITIONS) -> None:
        self._max_partitions = max(max_partitions, 1)
        self._answered: dict[TP, FetchPartition] | None = None  # None: no session yet
        # The last fetch's names and forgets, until it is answered; then the leader holds them.
        self._unanswered: tuple[list[FetchPartition], list[TP]] | None = None
        self._again: set[TP] = set()
        self._left_over = False

    @property
    def more_to_name(self) -> bool:
        """The last fetch left partitions to name for want of room: the next should follow
        at once, so this fetch should not long-poll."""
        return self._left_over

    def _bounded(self, named: list[FetchPartition]) -> list[FetchPartition]:
        """``named`` cut to the limit, the rest kept to be named next time."""
        limit = self._max_partitions
        self._left_over = len(named) > limit
        if not self._left_over:
            return named
        self._again.update((p.topic, p.partition) for p in named[limit:])
        return named[:limit]

    def request(
        self, current: Mapping[TP, FetchPartition], moved: Collection[TP] | None = None
    ) -> tuple[bool, list[FetchPartition], list[FetchForgotten]]:
        """(incremental, partitions to name, partitions to forget) for a fetch of
        ``current`` (every partition followed on this leader, at its current position).
        ``moved``: the only partitions whose position may have changed, or gone, since the
        previous request (None: any of them; the follower then compares them all)."""
        answered = self._answered
        if answered is None:
            self._again = set()
            named = self._bounded(list(current.values()))
            self._unanswered = (named, [])
            return False, named, []
        again, self._again = self._again, set()
        forgotten_before: list[TP] = []
        if self._unanswered is not None:  # the last fetch was not answered: name it again
            named_before, forgotten_before = self._unanswered
            again.update((p.topic, p.partition) for p in named_before)
        if moved is None:
            candidates: Iterable[TP] = current
            forgotten = [key for key in answered if key not in current]
        else:
            candidates = again.union(moved)
            forgotten = [k for k in forgotten_before if k in answered and k not in current]
        changed = self._bounded(
            [
                p
                for key in candidates
                if (p := current.get(key)) is not None
                and (((last := answered.get(key)) is not p and last != p) or key in again)
            ]
        )
        self._unanswered = (changed, forgotten)
        return True, changed, [FetchForgotten(*key) for key in forgotten]

    def answered(self) -> None:
        """The fetch was answered: the leader now holds the positions it named."""
        if self._unanswered is None:
            return
        named, forgotten = self._unanswered
        self._unanswered = None
        answered = self._answered if self._answered is not None else {}
        for p in named:
            answered[(p.topic, p.partition)] = p
        for key in forgotten:
            answered.pop(key, None)
        self._answered = answered

    def ask_again(self, key: TP) -> None:
        """Name ``key`` in the next fetch even if its position did not move (its answer was
        dropped: the leader answers a named partition whatever it last said)."""
        if self._answered is not None:
            self._again.add(key)

    def reset(self) -> None:
        """Start over with a full fetch (the leader lost the session)."""
        self._answered = None
        self._unanswered = None
        self._again = set()
        self._left_over = False


class LeaderFetchSession:
    """The leader's end: every partition's latest position, what it last answered, and
    which partitions are quiet."""

    def __init__(self, refresh_ms: int = 0, max_partitions: int = MAX_SESSION_PARTITIONS) -> None:
        """``refresh_ms``: read every partition at least this often (0: every round).
        ``max_partitions``: read at most this many for one answer, besides those the fetch
        named (a round after thousands of partitions were created, or a refresh, would
        otherwise read and encode them all in one answer); the next answers go on from
        where this one stopped."""
        self._refresh_ms = refresh_ms
        self._max_partitions = max(max_partitions, 1)
        self._named: frozenset[TP] = frozenset()
        self._cursor = 0  # where the next bounded read starts in the session's order
        self._positions: dict[TP, FetchPartition] | None = None
        self._answered: dict[TP, tuple[int, int, int, int, int]] = {}
        # Quiet partitions: their replica and its news counter when last read.
        self._quiet: dict[TP, tuple[NewsSource, int]] = {}
        self._refreshed_ms: int | None = None
        self._rounds = SessionRounds()
        self._replica_id = -1  # the follower, from its fetches

    def expand(self, request: FetchRequest) -> tuple[FetchRequest, frozenset[TP]]:
        """The full fetch ``request`` stands for (a full one starts the session afresh, an
        incremental one updates and forgets positions), and the partitions it named (each
        is answered: the follower named it because its position moved). Raises
        FetchSessionError."""
        quiet = self._quiet
        if not request.incremental:
            positions = {(p.topic, p.partition): p for p in request.partitions}
            self._answered = {}
            self._resume_all()
        elif self._positions is None:
            raise FetchSessionError("an incremental fetch without a session")
        else:
            positions = self._positions
            for gone in request.forgotten:
                key = (gone.topic, gone.partition)
                positions.pop(key, None)
                self._answered.pop(key, None)
                self._resume(quiet.pop(key, None))
            for p in request.partitions:
                key = (p.topic, p.partition)
                positions[key] = p
                self._resume(quiet.pop(key, None))
        self._replica_id = request.replica_id
        if len(positions) > MAX_SESSION_PARTITIONS:
            self._positions = None
            raise FetchSessionError(f"more than {MAX_SESSION_PARTITIONS} partitions")
        self._positions = positions
        full = dataclasses.replace(
            request, partitions=list(positions.values()), incremental=False, forgotten=[]
        )
        self._named = frozenset((p.topic, p.partition) for p in request.partitions)
        return full, self._named

    def to_read(self, full: FetchRequest, now_ms: int) -> tuple[FetchRequest, bool]:
        """The part of ``full`` (what :meth:`expand` returned) to read now, and whether
        partitions that may have news were left for the next answer (then the answer must
        not long-poll). All but the quiet partitions whose replica has no news since they
        were read (everything once ``refresh_ms`` has passed since the last time), at most
        ``max_partitions`` besides the named ones. Called again after each long-poll
        wake-up."""
        quiet = self._quiet
        if self._refreshed_ms is None or now_ms - self._refreshed_ms >= self._refresh_ms:
            self._resume_all()
            self._refreshed_ms = now_ms
        if quiet:
            woken = [key for key, (source, seen) in quiet.items() if source.news != seen]
            for key in woken:
                self._resume(quiet.pop(key))
        # Every partition still quiet has had no news: its follower is caught up now.
        self._rounds.last_ms = now_ms
        partitions = full.partitions
        if quiet:
            partitions = [p for p in partitions if (p.topic, p.partition) not in quiet]
        if len(partitions) <= self._max_partitions:
            if partitions is not full.partitions:
                full = dataclasses.replace(full, partitions=partitions)
            return full, False
        chosen, left_over = self._bounded(full.partitions)
        return dataclasses.replace(full, partitions=chosen), left_over

    def _bounded(self, partitions: list[FetchPartition]) -> tuple[list[FetchPartition], bool]:
        """The named partitions and at most ``max_partitions`` others that are not quiet,
        these taken in the session's order from where the last bounded read stopped (no
        partition waits behind others that always have news); and whether any was left."""
        named, quiet, room = self._named, self._quiet, self._max_partitions
        count = len(partitions)
        start = self._cursor % count
        chosen: list[FetchPartition] = []
        left_over = False
        for step in range(count):
            index = (start + step) % count
            p = partitions[index]
            key = (p.topic, p.partition)
            if key in named:
                chosen.append(p)
            elif key in quiet:
                continue
            elif room:
                chosen.append(p)
                room -= 1
                self._cursor = index + 1
            else:
                left_over = True
        return chosen, left_over

    def keeps(
        self,
        r: FetchPartitionResponse,
        named: frozenset[TP],
        source_of: Callable[[TP], NewsSource | None] = lambda key: None,
    ) -> bool:
        """Whether the follower needs answer ``r``: it named the partition, or the answer
        tells it something new; a kept answer counts as given. A partition whose answer
        left the follower caught up becomes quiet as of its replica's news counter
        (``source_of``) now, if the replica still stands where the answer says: the read
        and this filter yield to the event loop between slices, so an append may have come
        after this partition was read."""
        key = (r.topic, r.partition)
        state = (r.error_code, r.high_watermark, r.log_start_offset, r.log_end_offset,
                 r.leader_epoch)  # fmt: skip
        has_records = blob_length(r.records) > 0
        kept = (
            key in named
            or r.error_code != ErrorCode.NONE
            or has_records
            or is_diverging(r)
            or self._answered.get(key) != state
        )
        if kept:
            self._answered[key] = state
        position = (self._positions or {}).get(key)
        if (
            r.error_code == ErrorCode.NONE
            and not has_records
            and not is_diverging(r)
            and position is not None
            and 0 <= r.log_end_offset <= position.fetch_offset
        ):
            source = source_of(key)
            if source is not None and source.fetch_state == (
                r.high_watermark,
                r.log_start_offset,
                r.log_end_offset,
                r.leader_epoch,
            ):
                self._quiet[key] = (source, source.news)
                source.follower_quiet(self._replica_id, self._rounds)
        return kept

    def _resume(self, entry: tuple[NewsSource, int] | None) -> None:
        """A quiet partition (``entry``, from the quiet map) is to be read again."""
        if entry is not None:
            entry[0].follower_resumed(self._replica_id, self._rounds)

    def _resume_all(self) -> None:
        for entry in self._quiet.values():
            self._resume(entry)
        self._quiet.clear()
