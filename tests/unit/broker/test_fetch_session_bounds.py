"""Fetch sessions in turns (``replication.fetch_max_partitions``): a follower of thousands of
partitions names at most so many per fetch and does not wait while more are left; a leader
reads at most so many besides the named ones, taking the rest in turn, and answers at once
when it left some for the next fetch. Both ends still agree on every position."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import trio
from broker_context import middle
from test_fetch_session import _keyed, _position, random_rounds

from rillet.broker.config import NodeConfig, ReplicationConfig
from rillet.broker.dispatcher import SESSION_REFRESH_MS, Dispatcher
from rillet.broker.replica.replication.fetch_session import FollowerFetchSession, LeaderFetchSession
from rillet.broker.security.session import Session
from rillet.wire.api import ApiKey
from rillet.wire.messages import FetchPartition, FetchRequest, FetchResponse
from rillet.wire.protocol import PROTOCOL_VERSION, RequestHeader


def _request(partitions: list[FetchPartition], incremental: bool = False) -> FetchRequest:
    return FetchRequest(0, 1, 1 << 20, partitions, 2, b"", incremental=incremental)


def test_the_follower_names_a_bounded_number_per_fetch_and_the_rest_next() -> None:
    f = FollowerFetchSession(max_partitions=2)
    parts = [_position(p, 0) for p in range(5)]
    incremental, named, _ = f.request(_keyed(parts))
    assert not incremental and [p.partition for p in named] == [0, 1] and f.more_to_name
    f.answered()
    _, named, _ = f.request(_keyed(parts))
    assert [p.partition for p in named] == [2, 3] and f.more_to_name
    f.answered()
    moved = [_position(0, 7), *parts[1:]]
    _, named, _ = f.request(_keyed(moved), moved=[("t", 0)])
    assert sorted(p.partition for p in named) == [0, 4] and not f.more_to_name
    f.answered()
    assert f.request(_keyed(moved)) == (True, [], []) and not f.more_to_name
    f.reset()
    assert not f.more_to_name


def test_the_leader_reads_named_partitions_and_a_bounded_number_of_others_in_turn() -> None:
    leader = LeaderFetchSession(max_partitions=2)
    full, _ = leader.expand(_request([_position(p, 0) for p in range(5)]))
    full, named = leader.expand(_request([_position(4, 3)], incremental=True))
    assert named == {("t", 4)}
    turns = []
    for _ in range(3):
        reading, left_over = leader.to_read(full, 0)
        assert left_over
        turns.append(sorted(p.partition for p in reading.partitions))
    assert turns == [[0, 1, 4], [2, 3, 4], [0, 1, 4]]  # the named one each time
    small = LeaderFetchSession(max_partitions=5)
    full, _ = small.expand(_request([_position(p, 0) for p in range(5)]))
    assert small.to_read(full, 0) == (full, False)  # within the bound: everything, as before


def test_both_ends_agree_through_seeded_random_rounds_in_turns() -> None:
    """Once a fetch leaves nothing to name, the leader holds every position the follower
    has, whatever moved, appeared or went, with any bound."""
    for seed in range(50):
        rng = random.Random(seed)
        bound = rng.randint(1, 4)
        follower = FollowerFetchSession(max_partitions=bound)
        leader = LeaderFetchSession(max_partitions=bound)
        for current in random_rounds(rng):
            for turn in range(100):
                incremental, named, forgotten = follower.request(_keyed(current))
                assert len(named) <= bound, seed
                full, _ = leader.expand(
                    dataclasses.replace(_request(named, incremental), forgotten=forgotten)
                )
                if turn == 0 and rng.random() < 0.1:
                    follower.reset()  # a lost answer: the next fetch is full
                    continue
                follower.answered()
                if not follower.more_to_name:
                    break
            assert turn < 99, seed
            if not follower.more_to_name:
                by_partition = sorted(full.partitions, key=lambda p: p.partition)
                assert by_partition == current, seed


def _header() -> RequestHeader:
    return RequestHeader(ApiKey.FETCH, PROTOCOL_VERSION, 1, "test")


async def _fetch(d: Dispatcher, request: FetchRequest, session: Session) -> FetchResponse:
    reply = d.dispatch(_header(), request, session)
    assert reply is not None
    answer: Any = reply.message
    if reply.waiting is not None:
        assert isinstance(reply.waiting, Coroutine)
        answer = await reply.waiting
    assert isinstance(answer, FetchResponse)
    return answer


async def test_an_answer_that_left_partitions_for_the_next_fetch_does_not_wait(
    tmp_path: Path, autojump_clock: object
) -> None:
    """Seven caught-up partitions, at most three read per answer: after a refresh (every
    partition read again) each long poll answers at once until all seven were read and
    found quiet; then it waits its full time."""
    config = NodeConfig(
        node_id=1, data_dir=tmp_path, replication=ReplicationConfig(fetch_max_partitions=3)
    )
    m = middle(tmp_path, config)
    for p in range(7):
        m.host("t", p)
    d = Dispatcher(m.ctx)
    session = Session("native", "127.0.0.1", node_id=2)
    token = m.ctx.metadata.auth.token
    at_start = [FetchPartition("t", p, 0, 1 << 20, 1, -1, 0) for p in range(7)]
    first = await _fetch(d, FetchRequest(0, 1, 1 << 20, at_start, 2, token), session)
    assert sorted(r.partition for r in first.partitions) == list(range(7))  # all named
    await trio.sleep(SESSION_REFRESH_MS / 1000 + 1)  # past the refresh: nothing is quiet any more
    long_poll = FetchRequest(10_000, 1, 1 << 20, [], 2, token, incremental=True)
    for _ in range(2):  # 3 read, 4 left; 3 read, 1 left
        started = trio.current_time()
        await _fetch(d, long_poll, session)
        assert trio.current_time() == started
    started = trio.current_time()
    await _fetch(d, long_poll, session)  # the last one read: nothing left, a full long poll
    assert trio.current_time() - started >= 9.9
