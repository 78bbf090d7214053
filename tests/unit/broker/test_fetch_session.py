"""Incremental fetch sessions: the follower names only partitions whose position moved, the
leader answers only partitions with news; both ends stay in step (the leader's positions
are always the follower's), and a session lives on one connection."""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
from broker_context import Middle, middle

from rillet.broker.dispatcher import SESSION_REFRESH_MS, Dispatcher
from rillet.broker.handlers.produce import handle_produce
from rillet.broker.replica.replication.fetch_session import (
    FetchSessionError,
    FollowerFetchSession,
    LeaderFetchSession,
    NewsSource,
)
from rillet.broker.replica.replication.session_rounds import SessionRounds
from rillet.broker.security.session import Session
from rillet.wire.api import ApiKey
from rillet.wire.batch import build_batch
from rillet.wire.error_codes import ErrorCode
from rillet.wire.frame import blob_length
from rillet.wire.messages import (
    FetchForgotten,
    FetchPartition,
    FetchPartitionResponse,
    FetchRequest,
    FetchResponse,
    ProducePartitionData,
    ProduceRequest,
)
from rillet.wire.protocol import PROTOCOL_VERSION, RequestHeader


def _position(partition: int, offset: int, topic: str = "t") -> FetchPartition:
    return FetchPartition(topic, partition, offset, 1 << 20, 1, 1, 0)


def _request(
    partitions: list[FetchPartition],
    incremental: bool = False,
    forgotten: list[FetchForgotten] | None = None,
) -> FetchRequest:
    return FetchRequest(
        0, 1, 1 << 20, partitions, 2, b"", incremental=incremental, forgotten=forgotten or []
    )


def _answer(partition: int, hw: int, records: bytes = b"", code: int = 0) -> FetchPartitionResponse:
    return FetchPartitionResponse("t", partition, code, hw, 0, records, hw, -1, -1, 1, 1)


# -- the follower's end -----------------------------------------------------------------------


def _keyed(parts: list[FetchPartition]) -> dict[tuple[str, int], FetchPartition]:
    return {(p.topic, p.partition): p for p in parts}


def test_the_first_fetch_names_everything_then_only_what_moved() -> None:
    f = FollowerFetchSession()
    parts = [_position(0, 5), _position(1, 7)]
    assert f.request(_keyed(parts)) == (False, parts, [])
    f.answered()
    assert f.request(_keyed(parts)) == (True, [], [])  # nothing moved
    f.answered()
    moved = [_position(0, 9), _position(1, 7)]
    assert f.request(_keyed(moved)) == (True, [_position(0, 9)], [])
    f.answered()
    assert f.request(_keyed([_position(1, 7)])) == (True, [], [FetchForgotten("t", 0)])


def test_an_unanswered_fetch_is_named_again_and_a_reset_starts_over() -> None:
    f = FollowerFetchSession()
    f.request(_keyed([_position(0, 5)]))
    f.answered()
    f.request(_keyed([_position(0, 6)]))  # no answer (the caller resets or reconnects)
    assert f.request(_keyed([_position(0, 6)])) == (True, [_position(0, 6)], [])
    f.answered()
    f.ask_again(("t", 0))  # its answer was dropped: ask although nothing moved
    assert f.request(_keyed([_position(0, 6)])) == (True, [_position(0, 6)], [])
    f.reset()
    assert f.request(_keyed([_position(0, 6)])) == (False, [_position(0, 6)], [])


def test_told_what_moved_the_follower_compares_only_those() -> None:
    f = FollowerFetchSession()
    parts = _keyed([_position(0, 5), _position(1, 7), _position(2, 1)])
    f.request(parts)
    f.answered()
    parts[("t", 1)] = _position(1, 8)
    assert f.request(parts, moved=[("t", 1)]) == (True, [_position(1, 8)], [])
    f.answered()
    assert f.request(parts, moved=[("t", 0)]) == (True, [], [])  # looked at, did not move


def test_told_what_moved_the_follower_still_names_what_went_unanswered_or_asked_again() -> None:
    f = FollowerFetchSession()
    parts = _keyed([_position(0, 5), _position(1, 7)])
    f.request(parts)
    f.answered()
    parts[("t", 0)] = _position(0, 6)
    f.request(parts, moved=[("t", 0)])  # not answered
    assert f.request(parts, moved=[]) == (True, [_position(0, 6)], [])
    f.answered()
    f.ask_again(("t", 1))
    assert f.request(parts, moved=[]) == (True, [_position(1, 7)], [])


def test_both_ends_stay_in_step_when_the_follower_is_told_what_moved() -> None:
    """Between full rounds (membership changes), the follower compares only what it is told
    moved (and whatever else it likes): the leader still reads the follower's positions."""
    for seed in range(50):
        rng = random.Random(seed)
        follower, leader = FollowerFetchSession(), LeaderFetchSession()
        offsets = {p: 0 for p in range(rng.randint(1, 12))}
        for _ in range(40):
            moved: list[tuple[str, int]] = []
            membership_changed = False
            for p in list(offsets):
                roll = rng.random()
                if roll < 0.3:
                    offsets[p] += rng.randint(1, 5)
                    moved.append(("t", p))
                elif roll < 0.35:
                    del offsets[p]
                    membership_changed = True  # a full comparison
                elif roll < 0.4:
                    moved.append(("t", p))  # told to look, although it did not move
            if rng.random() < 0.2:
                offsets[max(offsets, default=0) + 1] = 0
                membership_changed = True
            current = [_position(p, o) for p, o in sorted(offsets.items())]
            told = None if membership_changed else moved
            incremental, named, forgotten = follower.request(_keyed(current), told)
            full, _ = leader.expand(_request(named, incremental, forgotten))
            assert sorted(full.partitions, key=lambda p: p.partition) == current, seed
            roll = rng.random()
            if roll < 0.1:
                follower.reset()  # a lost answer: the next fetch is full
            elif roll < 0.2 and current:
                follower.answered()
                follower.ask_again(("t", current[0].partition))
            else:
                follower.answered()


# -- the leader's end -------------------------------------------------------------------------


def news_of(
    leader: LeaderFetchSession,
    response: FetchResponse,
    named: frozenset[tuple[str, int]],
    source_of: Callable[[tuple[str, int]], NewsSource | None] = lambda key: None,
) -> FetchResponse:
    """The answer the leader sends for ``response``: its entries that ``keeps`` keeps, in
    turn (what the node does between slices, replication/encoded_fetch_answer.py)."""
    return FetchResponse([r for r in response.partitions if leader.keeps(r, named, source_of)])


def test_the_leader_answers_named_partitions_and_news_only() -> None:
    leader = LeaderFetchSession()
    full, named = leader.expand(_request([_position(0, 5), _position(1, 7)]))
    assert full.partitions == [_position(0, 5), _position(1, 7)] and not full.incremental
    first = news_of(leader, FetchResponse([_answer(0, 5), _answer(1, 7)]), named)
    assert [r.partition for r in first.partitions] == [0, 1]
    full, named = leader.expand(_request([], incremental=True))
    assert full.partitions == [_position(0, 5), _position(1, 7)] and named == frozenset()
    quiet = news_of(leader, FetchResponse([_answer(0, 5), _answer(1, 7)]), named)
    assert quiet.partitions == []  # nothing new: an empty answer
    news = news_of(
        leader, FetchResponse([_answer(0, 6), _answer(1, 7, records=b"x"), _answer(0, 6)]), named
    )
    assert [r.partition for r in news.partitions] == [0, 1]  # a new HW; records
    errors = news_of(
        leader, FetchResponse([_answer(1, 7, code=ErrorCode.NOT_LEADER_OR_FOLLOWER)]), named
    )
    assert len(errors.partitions) == 1  # errors always
    full, named = leader.expand(_request([_position(1, 9)], True, [FetchForgotten("t", 0)]))
    assert full.partitions == [_position(1, 9)] and named == {("t", 1)}


class _Source:
    """A replica as ``_answer`` describes it: log end at the high watermark, epoch 1."""

    def __init__(self, hw: int) -> None:
        self.news = 0
        self.hw = hw
        # While quiet for a follower: the session's rounds; on resuming, the round it kept.
        self.quiet_in: SessionRounds | None = None
        self.resumed_at: list[int] = []

    @property
    def fetch_state(self) -> tuple[int, int, int, int]:
        return (self.hw, 0, self.hw, 1)

    def follower_quiet(self, replica_id: int, rounds: SessionRounds) -> None:
        assert replica_id == 2  # _request's replica id
        self.quiet_in = rounds

    def follower_resumed(self, replica_id: int, rounds: SessionRounds) -> None:
        assert replica_id == 2 and rounds is self.quiet_in
        self.quiet_in = None
        self.resumed_at.append(rounds.last_ms)


def test_caught_up_partitions_are_not_read_again_until_news_or_a_refresh() -> None:
    """A partition whose answer left the follower caught up is skipped by later reads until
    its replica reports news, the follower names it, or ``refresh_ms`` passes."""
    sources = {("t", p): _Source(hw) for p, hw in ((0, 5), (1, 7), (2, 3))}
    leader = LeaderFetchSession(refresh_ms=1000)
    first = [_position(0, 5), _position(1, 7), _position(2, 3)]
    full, named = leader.expand(_request(first))
    assert leader.to_read(full, 0)[0] == full  # nothing is quiet before a first answer
    # 0 and 1 are caught up (log end = fetch offset); 2 is behind (log end 9)
    answer = [_answer(0, 5), _answer(1, 7), _answer(2, 3)]
    answer[2] = FetchPartitionResponse("t", 2, 0, 3, 0, b"", 9, -1, -1, 1, 1)
    news_of(leader, FetchResponse(answer), named, sources.get)
    full, named = leader.expand(_request([], incremental=True))
    assert [p.partition for p in leader.to_read(full, 100)[0].partitions] == [2]
    sources[("t", 1)].news += 1  # an append, a high-watermark move, a role change...
    assert [p.partition for p in leader.to_read(full, 100)[0].partitions] == [1, 2]
    news_of(leader, FetchResponse([_answer(1, 7), answer[2]]), named, sources.get)
    full, named = leader.expand(_request([_position(0, 6)], True))
    assert [p.partition for p in leader.to_read(full, 200)[0].partitions] == [0, 2]  # 0 was named
    sources[("t", 0)].hw = 6
    news_of(leader, FetchResponse([_answer(0, 6), answer[2]]), named, sources.get)
    errors = FetchResponse(
        [_answer(0, 6, code=ErrorCode.NOT_LEADER_OR_FOLLOWER), _answer(1, 7), answer[2]]
    )
    full, named = leader.expand(_request([], True))
    assert len(leader.to_read(full, 1000)[0].partitions) == 3  # the refresh reads everything
    news_of(leader, errors, named, sources.get)  # an error never leaves a partition quiet
    full, named = leader.expand(_request([], True))
    assert [p.partition for p in leader.to_read(full, 1100)[0].partitions] == [0, 2]
    full, named = leader.expand(_request(first))
    assert leader.to_read(full, 1200)[0] == full  # a full fetch starts over


def test_a_partition_that_moved_after_its_read_is_not_quiet() -> None:
    """The read yields between slices: an append after a partition was read (its answer
    says caught up at 5, the replica is at 6 now) must not leave it quiet."""
    source = _Source(6)
    leader = LeaderFetchSession(refresh_ms=1000)
    full, named = leader.expand(_request([_position(0, 5)]))
    news_of(leader, FetchResponse([_answer(0, 5)]), named, {("t", 0): source}.get)
    full, _ = leader.expand(_request([], incremental=True))
    assert [p.partition for p in leader.to_read(full, 100)[0].partitions] == [0]


def test_a_quiet_partition_s_follower_is_caught_up_as_of_the_session_s_latest_round() -> None:
    """Going quiet hands the replica the session's rounds; each later round moves them on
    without reading the partition; reading it again (news, named, a full fetch) hands back
    the last round that still found it quiet."""
    sources = {("t", p): _Source(5) for p in range(3)}
    leader = LeaderFetchSession(refresh_ms=30_000)
    full, named = leader.expand(_request([_position(p, 5) for p in range(3)]))
    leader.to_read(full, 10)
    news_of(leader, FetchResponse([_answer(p, 5) for p in range(3)]), named, sources.get)
    rounds = sources[("t", 0)].quiet_in
    assert rounds is not None and rounds.last_ms == 10
    assert all(s.quiet_in is rounds for s in sources.values())
    for now in (500, 1000, 1500):
        full, named = leader.expand(_request([], incremental=True))
        assert leader.to_read(full, now)[0].partitions == []
        assert rounds.last_ms == now  # caught up at every round, with nothing read
    sources[("t", 1)].news += 1
    full, named = leader.expand(_request([_position(2, 5)], incremental=True))
    assert sources[("t", 2)].resumed_at == [1500]  # named: read again from here on
    assert [p.partition for p in leader.to_read(full, 2000)[0].partitions] == [1, 2]
    assert sources[("t", 1)].resumed_at == [1500]  # woken by its news
    assert sources[("t", 0)].quiet_in is rounds and rounds.last_ms == 2000
    full, named = leader.expand(_request([_position(p, 5) for p in range(3)]))
    assert sources[("t", 0)].resumed_at == [2000] and sources[("t", 0)].quiet_in is None


def test_an_incremental_fetch_needs_a_session() -> None:
    with pytest.raises(FetchSessionError):
        LeaderFetchSession().expand(_request([_position(0, 5)], incremental=True))


def random_rounds(rng: random.Random, rounds: int = 40) -> Iterator[list[FetchPartition]]:
    """A follower's positions, round after round: some move, some go, new ones appear."""
    offsets = {p: 0 for p in range(rng.randint(1, 12))}
    for _ in range(rounds):
        for p in list(offsets):
            roll = rng.random()
            if roll < 0.3:
                offsets[p] += rng.randint(1, 5)
            elif roll < 0.35:
                del offsets[p]
        if rng.random() < 0.2:
            offsets[max(offsets, default=0) + 1] = 0
        yield [_position(p, o) for p, o in sorted(offsets.items())]


def test_both_ends_stay_in_step_through_seeded_random_rounds() -> None:
    """Whatever moves, appears or goes, the positions the leader reads are the follower's."""
    for seed in range(50):
        rng = random.Random(seed)
        follower, leader = FollowerFetchSession(), LeaderFetchSession()
        for current in random_rounds(rng):
            incremental, named, forgotten = follower.request(_keyed(current))
            full, _ = leader.expand(_request(named, incremental, forgotten))
            assert sorted(full.partitions, key=lambda p: p.partition) == current, seed
            if rng.random() < 0.1:
                follower.reset()  # a lost answer: the next fetch is full
            else:
                follower.answered()


# -- on a node: the dispatcher keeps the session on the connection -----------------------------


def _header() -> RequestHeader:
    return RequestHeader(ApiKey.FETCH, PROTOCOL_VERSION, 1, "test")


async def _fetch(d: Dispatcher, request: FetchRequest, session: Session) -> FetchResponse:
    reply = d.dispatch(_header(), request, session)
    assert reply is not None
    if reply.waiting is not None:
        assert isinstance(reply.waiting, Coroutine)
        answer: Any = await reply.waiting
    else:
        answer = reply.message
    assert isinstance(answer, FetchResponse)
    return answer


def _follower_request(m: Middle, partitions: list[FetchPartition], **kw: Any) -> FetchRequest:
    return FetchRequest(0, 1, 1 << 20, partitions, 2, m.ctx.metadata.auth.token, **kw)


async def test_a_follower_connection_answers_only_partitions_with_news(tmp_path: Path) -> None:
    m = middle(tmp_path)
    for p in (0, 1):
        m.host("t", p)
    d = Dispatcher(m.ctx)
    session = Session("native", "127.0.0.1", node_id=2)
    at_start = [FetchPartition("t", p, 0, 1 << 20, 1, -1, 0) for p in (0, 1)]
    full = await _fetch(d, _follower_request(m, at_start), session)
    assert sorted(r.partition for r in full.partitions) == [0, 1]
    quiet = await _fetch(d, _follower_request(m, [], incremental=True), session)
    assert quiet.partitions == [] and quiet.error_code == 0
    produce = ProduceRequest(
        1, 1000, [ProducePartitionData("t", 1, build_batch([(m.clock.now_ms(), None, b"v", None)]))]
    )
    result = handle_produce(m.ctx, produce)
    written = await result if isinstance(result, Coroutine) else result
    assert written is not None and written.partitions[0].error_code == ErrorCode.NONE, written
    news = await _fetch(d, _follower_request(m, [], incremental=True), session)
    assert [(r.partition, blob_length(r.records) > 0) for r in news.partitions] == [(1, True)]
    # a new connection has no session: an incremental fetch there is told to start over
    other = Session("native", "127.0.0.1", node_id=2)
    await _fetch(d, _follower_request(m, at_start[:1]), other)  # proves the secret
    other.fetch_session = None
    lost = await _fetch(d, _follower_request(m, [], incremental=True), other)
    assert lost.error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND


async def test_a_leader_reads_only_partitions_with_news_between_refreshes(
    tmp_path: Path, autojump_clock: object
) -> None:
    """Real replicas behind the dispatcher: a caught-up follower's idle partitions are not
    read (its progress there is not touched) until an append wakes one or the refresh
    comes; what it reads still keeps every follower in the ISR."""
    m = middle(tmp_path)
    replicas = [m.host("t", p) for p in range(3)]
    d = Dispatcher(m.ctx)
    session = Session("native", "127.0.0.1", node_id=2)
    at_start = [FetchPartition("t", p, 0, 1 << 20, 1, -1, 0) for p in range(3)]
    await _fetch(d, _follower_request(m, at_start), session)

    def last_fetch_ms() -> list[int]:
        return [r.leader.followers[2].last_fetch_ms for r in replicas if r.leader is not None]

    read_at = last_fetch_ms()
    await trio.sleep(0.1)
    await _fetch(d, _follower_request(m, [], incremental=True), session)
    assert last_fetch_ms() == read_at  # all quiet: nothing read
    produce = ProduceRequest(
        1, 1000, [ProducePartitionData("t", 1, build_batch([(m.clock.now_ms(), None, b"v", None)]))]
    )
    written = handle_produce(m.ctx, produce)  # acks=1: answered at once
    assert not isinstance(written, Coroutine) and written is not None
    news = await _fetch(d, _follower_request(m, [], incremental=True), session)
    assert [(r.partition, blob_length(r.records) > 0) for r in news.partitions] == [(1, True)]
    assert last_fetch_ms()[0] == read_at[0] and last_fetch_ms()[1] > read_at[1]
    at_end = FetchPartition("t", 1, 1, 1 << 20, 1, 1, 0)
    moved = await _fetch(d, _follower_request(m, [at_end], incremental=True), session)
    assert [(r.partition, r.high_watermark) for r in moved.partitions] == [(1, 1)]
    # Idle rounds read nothing, yet keep the follower in the ISR past the lag limit.
    lag_max_ms = m.ctx.config.replication.replica_lag_time_max_ms
    read_at = last_fetch_ms()
    for _ in range(3):
        await trio.sleep(lag_max_ms / 2000)
        await _fetch(d, _follower_request(m, [], incremental=True), session)
    assert last_fetch_ms() == read_at
    now_ms = m.clock.now_ms()
    assert [r.isr_change(now_ms, lag_max_ms) for r in replicas] == [None, None, None]
    # Fetches stop: the lag limit after the last round, the follower is out.
    await trio.sleep(lag_max_ms / 1000 + 0.1)
    shrunk = [r.isr_change(m.clock.now_ms(), lag_max_ms) for r in replicas]
    assert all(p is not None and 2 not in p.isr for p in shrunk)
    for r in replicas:
        r.leader.proposal_failed()
    await trio.sleep(SESSION_REFRESH_MS / 1000)  # the safety-net refresh: everything read
    await _fetch(d, _follower_request(m, [], incremental=True), session)
    assert all(now > before for now, before in zip(last_fetch_ms(), read_at, strict=True))


async def test_a_stranger_s_fetch_gets_no_session(tmp_path: Path) -> None:
    m = middle(tmp_path)
    m.host("t", 0)
    d = Dispatcher(m.ctx)
    session = Session("native", "127.0.0.1")
    forged = FetchRequest(0, 1, 1 << 20, [FetchPartition("t", 0, 0, 1 << 20)], 2, b"forged")
    answer = await _fetch(d, forged, session)
    assert [r.error_code for r in answer.partitions] == [ErrorCode.AUTHENTICATION_FAILED]
    assert session.fetch_session is None


async def test_a_log_start_moved_by_retention_is_news_to_a_quiet_partition(
    tmp_path: Path, autojump_clock: object
) -> None:
    """Retention on the leader moves its log start: the follower hears it on its next
    fetch, though the partition was quiet (no full read comes for 30 s)."""
    m = middle(tmp_path)
    replica = m.host("t", 0, configs={"retention.ms": "1000"})
    d = Dispatcher(m.ctx)
    session = Session("native", "127.0.0.1", node_id=2)
    for _ in range(2):
        batch = build_batch([(m.clock.now_ms(), None, b"v", None)])
        written = handle_produce(
            m.ctx, ProduceRequest(1, 1000, [ProducePartitionData("t", 0, batch)])
        )
        assert not isinstance(written, Coroutine) and written is not None
        replica.log.roll(m.clock.now_ms())
    written_ns = m.clock.now_ms() * 1_000_000  # retention counts from the last write too:
    for segment in replica.log.segments():  # on the test's clock, not the file system's
        os.utime(segment.log_path, ns=(written_ns, written_ns))
    at_end = [FetchPartition("t", 0, 2, 1 << 20, 1, 1, 0)]
    await _fetch(d, _follower_request(m, at_end), session)
    idle = await _fetch(d, _follower_request(m, [], incremental=True), session)
    assert idle.partitions == []  # quiet
    await trio.sleep(2.0)
    assert m.replicas.enforce_retention() == 2
    news = await _fetch(d, _follower_request(m, [], incremental=True), session)
    assert [(r.partition, r.log_start_offset) for r in news.partitions] == [(0, 2)]
