"""Kafka clients' fetch sessions (KIP-227), per node, sans-I/O.

A consumer of many partitions would otherwise name every one of them in every Fetch, and get
every one back, records or not. With a session the node remembers the partitions, their
fetch positions and what it last answered for each; the client's next fetches (incremental,
with the session's id and next epoch) name only the partitions whose position moved and
those it stopped fetching (``forgotten``), and the answers carry only the partitions with
something new: records, an error, or a high watermark, last stable offset or log start
offset other than last answered.

As in Kafka, a fetch's ``(session_id, epoch)`` says what it is:

- ``(0, -1)``: no session (a full fetch, answered in full, session id 0);
- ``(id, -1)``: close session ``id``, then as ``(0, -1)``;
- ``(0, 0)`` or ``(id, 0)``: a full fetch that closes ``id`` (if any) and opens a new
  session when the cache has (or can make) room; the answer names its id, or 0;
- ``(id, n > 0)``: an incremental fetch; FETCH_SESSION_ID_NOT_FOUND when no session ``id``
  is cached, INVALID_FETCH_SESSION_EPOCH when ``n`` is not the epoch it expects.

The cache holds at most ``max.incremental.fetch.session.cache.slots`` sessions. A new one
takes a slot from a session unused for ``eviction_ms`` (the least recently used first); if
none is stale, from the session with the fewest partitions, but only when the new one has
more (a consumer of a few partitions never pushes out one of many).

The node holds one cache for all its Kafka connections; the listener only translates
(broker/kafka/data_path.py). This module reads no clock and draws ids from the random
generator it is given.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from dataclasses import dataclass, field

from rillet.wire.error_codes import ErrorCode

TP = tuple[str, int]
INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0
FINAL_EPOCH = -1
# max.incremental.fetch.session.cache.slots: Kafka's default.
DEFAULT_SESSION_SLOTS = 1000
# Kafka's minimum time a session must be unused before another may take its slot.
EVICTION_MS = 120_000
_MAX_EPOCH = 2**31 - 1


@dataclass(frozen=True, slots=True)
class Position:
    """What a fetch asks of one partition."""

    fetch_offset: int
    partition_max_bytes: int
    current_leader_epoch: int = -1


@dataclass(frozen=True, slots=True)
class PartitionAnswer:
    """What the node read for one partition (its records' size is all a session needs)."""

    error_code: int
    high_watermark: int
    last_stable_offset: int
    log_start_offset: int
    records_bytes: int


@dataclass(slots=True)
class _Cached:
    position: Position
    # What the session's client last heard (-1: nothing yet, so the next answer says it).
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1

    def must_answer(self, answer: PartitionAnswer) -> bool:
        """Whether the client needs ``answer``; what it is told is remembered."""
        changed = (
            answer.records_bytes > 0
            or answer.error_code != ErrorCode.NONE
            or answer.high_watermark != self.high_watermark
            or answer.last_stable_offset != self.last_stable_offset
            or answer.log_start_offset != self.log_start_offset
        )
        if answer.error_code != ErrorCode.NONE:
            # Kafka forgets what it told: the answer after an error is always sent.
            self.high_watermark = self.last_stable_offset = self.log_start_offset = -1
        else:
            self.high_watermark = answer.high_watermark
            self.last_stable_offset = answer.last_stable_offset
            self.log_start_offset = answer.log_start_offset
        return changed


@dataclass(slots=True)
class FetchSession:
    session_id: int
    epoch: int  # the epoch the next incremental fetch must carry
    partitions: OrderedDict[TP, _Cached]
    last_used_ms: int

    def update(self, named: dict[TP, Position], forgotten: list[TP]) -> None:
        for key in forgotten:
            self.partitions.pop(key, None)
        for key, position in named.items():
            cached = self.partitions.get(key)
            if cached is None:
                self.partitions[key] = _Cached(position)
            else:
                cached.position = position


def next_epoch(epoch: int) -> int:
    """Kafka's: 1 after the largest int32; the final epoch stays final."""
    if epoch < 0:
        return epoch
    return 1 if epoch == _MAX_EPOCH else epoch + 1


@dataclass(frozen=True, slots=True)
class SessionRefusal:
    """An incremental fetch the cache cannot serve: answered with only this top-level error."""

    error_code: ErrorCode
    message: str


@dataclass(slots=True)
class FetchContext:
    """One fetch within (or without) a session: every partition to read, in the order the
    answer lists them, and how the answer is cut (:meth:`answer`)."""

    cache: FetchSessionCache
    partitions: list[tuple[TP, Position]]
    session: FetchSession | None = None  # incremental: the session it belongs to
    opens_session: bool = False  # a full fetch that may open a session

    def answer(
        self, answers: list[PartitionAnswer], now_ms: int
    ) -> tuple[int, list[tuple[TP, PartitionAnswer]]]:
        """(session id for the response, the partitions to answer) given ``answers`` in
        the order of :attr:`partitions`."""
        pairs = [(key, a) for (key, _), a in zip(self.partitions, answers, strict=True)]
        session = self.session
        if session is not None:
            return session.session_id, self.cache.incremental_answer(session, pairs, now_ms)
        if not self.opens_session:
            return INVALID_SESSION_ID, pairs
        return self.cache.open_session(self.partitions, pairs, now_ms), pairs


@dataclass(slots=True)
class FetchSessionStats:
    """What the node's metrics tell of its fetch sessions."""

    full_fetches: int = 0
    incremental_fetches: int = 0
    partitions_asked: int = 0  # named in incremental fetches
    partitions_answered: int = 0  # in answers to incremental fetches
    evictions: int = 0
    refusals: int = 0  # FETCH_SESSION_ID_NOT_FOUND and INVALID_FETCH_SESSION_EPOCH


@dataclass(slots=True)
class FetchSessionCache:
    """The node's fetch sessions, at most ``max_slots`` (0: none; every fetch is full)."""

    max_slots: int
    rng: random.Random
    eviction_ms: int = EVICTION_MS
    # Least recently used first.
    _sessions: OrderedDict[int, FetchSession] = field(default_factory=OrderedDict)
    stats: FetchSessionStats = field(default_factory=FetchSessionStats)

    def __len__(self) -> int:
        return len(self._sessions)

    def cached_partitions(self) -> int:
        return sum(len(s.partitions) for s in self._sessions.values())

    def get(self, session_id: int) -> FetchSession | None:
        return self._sessions.get(session_id)

    def new_context(
        self,
        session_id: int,
        epoch: int,
        named: dict[TP, Position],
        forgotten: list[TP],
        now_ms: int,
    ) -> FetchContext | SessionRefusal:
        """The context of a fetch carrying ``(session_id, epoch)``, the partitions it names
        (in request order) and those it forgets."""
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            if session_id != INVALID_SESSION_ID:
                self._sessions.pop(session_id, None)
            self.stats.full_fetches += 1
            return FetchContext(self, list(named.items()), opens_session=epoch == INITIAL_EPOCH)
        session = self._sessions.get(session_id)
        if session is None:
            self.stats.refusals += 1
            return SessionRefusal(
                ErrorCode.FETCH_SESSION_ID_NOT_FOUND,
                f"no fetch session {session_id} on this node (evicted or never opened)",
            )
        if session.epoch != epoch:
            self.stats.refusals += 1
            return SessionRefusal(
                ErrorCode.INVALID_FETCH_SESSION_EPOCH,
                f"fetch session {session_id} expects epoch {session.epoch}, not {epoch}",
            )
        session.update(named, forgotten)
        session.epoch = next_epoch(epoch)
        self._touch(session, now_ms)
        self.stats.incremental_fetches += 1
        self.stats.partitions_asked += len(named)
        positions = [(key, cached.position) for key, cached in session.partitions.items()]
        return FetchContext(self, positions, session=session)

    def incremental_answer(
        self, session: FetchSession, pairs: list[tuple[TP, PartitionAnswer]], now_ms: int
    ) -> list[tuple[TP, PartitionAnswer]]:
        """The answers the session's client needs. Each answered partition moves to the end
        of the session's order, as in Kafka, so that partitions always full of records do
        not crowd the others out of a size-limited answer."""
        kept: list[tuple[TP, PartitionAnswer]] = []
        partitions = session.partitions
        for key, answer in pairs:
            cached = partitions.get(key)
            if cached is None:  # forgotten by a later fetch of the session meanwhile
                continue
            if cached.must_answer(answer):
                kept.append((key, answer))
                partitions.move_to_end(key)
        self._touch(session, now_ms)
        self.stats.partitions_answered += len(kept)
        return kept

    def open_session(
        self,
        positions: list[tuple[TP, Position]],
        pairs: list[tuple[TP, PartitionAnswer]],
        now_ms: int,
    ) -> int:
        """A new session holding ``positions`` as answered by ``pairs``; its id, or 0 when
        the cache has no room for it."""
        if self.max_slots <= 0:
            return INVALID_SESSION_ID
        if len(self._sessions) >= self.max_slots and not self._evict_for(len(positions), now_ms):
            return INVALID_SESSION_ID
        session_id = self._new_id()
        session = FetchSession(session_id, next_epoch(INITIAL_EPOCH), OrderedDict(), now_ms)
        for key, position in positions:
            session.partitions[key] = _Cached(position)
        for key, answer in pairs:
            session.partitions[key].must_answer(answer)
        self._sessions[session_id] = session
        return session_id

    def _evict_for(self, size: int, now_ms: int) -> bool:
        """Free a slot for a new session of ``size`` partitions, as Kafka does: the least
        recently used session if stale, else the smallest one if smaller than ``size``."""
        oldest = next(iter(self._sessions.values()), None)
        if oldest is None:
            return False
        if now_ms - oldest.last_used_ms > self.eviction_ms:
            victim = oldest
        else:
            victim = min(self._sessions.values(), key=lambda s: (len(s.partitions), s.session_id))
            if size <= len(victim.partitions):
                return False
        del self._sessions[victim.session_id]
        self.stats.evictions += 1
        return True

    def _touch(self, session: FetchSession, now_ms: int) -> None:
        session.last_used_ms = max(session.last_used_ms, now_ms)
        if session.session_id in self._sessions:
            self._sessions.move_to_end(session.session_id)

    def _new_id(self) -> int:
        while True:
            session_id = self.rng.randint(1, _MAX_EPOCH)
            if session_id not in self._sessions:
                return session_id
