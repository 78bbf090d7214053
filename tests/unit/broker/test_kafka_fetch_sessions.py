"""Kafka clients' fetch sessions (KIP-227): the per-node cache and the Fetch translation.

The cache is driven directly (no sockets, an explicit clock and a seeded generator); the
translation takes fetches encoded by kafka-python (the independent oracle) through the
listener's decoding path and decodes its answers with kafka-python again.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from kafka.protocol.consumer import FetchRequest, FetchResponse
from kafka_front_end import StaticView, received

from rillet.broker.handlers.fetch_sessions import (
    FetchContext,
    FetchSessionCache,
    PartitionAnswer,
    Position,
    SessionRefusal,
    next_epoch,
)
from rillet.broker.kafka.codec import frame_parts
from rillet.broker.kafka.front_end import translate
from rillet.broker.kafka.translation import Answer, Caller, Forward, RawBody
from rillet.wire import messages as m
from rillet.wire.error_codes import ErrorCode

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

QUIET = PartitionAnswer(ErrorCode.NONE, 10, 10, 0, 0)
DATA = PartitionAnswer(ErrorCode.NONE, 10, 10, 0, 100)


def _named(*keys: tuple[str, int], offset: int = 0) -> dict[tuple[str, int], Position]:
    return {key: Position(offset, 1 << 20) for key in keys}


def _cache(slots: int = 10) -> FetchSessionCache:
    return FetchSessionCache(slots, random.Random(3))


def _context(cache: FetchSessionCache, *args: Any) -> FetchContext:
    context = cache.new_context(*args)
    assert isinstance(context, FetchContext), context
    return context


def _open(cache: FetchSessionCache, size: int, now_ms: int = 0, topic: str = "t") -> int:
    keys = [(topic, i) for i in range(size)]
    context = _context(cache, 0, 0, _named(*keys), [], now_ms)
    session_id, kept = context.answer([QUIET] * size, now_ms)
    assert len(kept) == size
    return session_id


def test_a_full_fetch_opens_a_session_and_incremental_ones_answer_only_news() -> None:
    cache = _cache()
    keys = [("a", 0), ("a", 1), ("b", 0)]
    context = _context(cache, 0, 0, _named(*keys), [], 0)
    session_id, kept = context.answer([QUIET, DATA, QUIET], 0)
    assert session_id > 0 and [k for k, _ in kept] == keys  # a full answer names them all
    assert cache.get(session_id) is not None and len(cache) == 1

    # Epoch 1 names nothing: every partition is read, none has news.
    context = _context(cache, session_id, 1, {}, [], 5)
    assert [key for key, _ in context.partitions] == keys
    assert context.answer([QUIET, QUIET, QUIET], 5) == (session_id, [])

    # New records, a moved high watermark, a moved log start and an error are news.
    context = _context(cache, session_id, 2, _named(("a", 1), offset=7), [], 6)
    assert dict(context.partitions)[("a", 1)].fetch_offset == 7
    moved = PartitionAnswer(ErrorCode.NONE, 11, 11, 0, 0)
    _, kept = context.answer([DATA, moved, QUIET], 6)
    assert [k for k, _ in kept] == [("a", 0), ("a", 1)]
    context = _context(cache, session_id, 3, {}, [], 7)
    start = PartitionAnswer(ErrorCode.NONE, 10, 10, 4, 0)
    failed = PartitionAnswer(ErrorCode.NOT_LEADER_OR_FOLLOWER, -1, -1, -1, 0)
    order = [key for key, _ in context.partitions]
    answers = {("b", 0): start, ("a", 0): failed, ("a", 1): moved}
    _, kept = context.answer([answers[k] for k in order], 7)
    assert {k for k, _ in kept} == {("b", 0), ("a", 0)}
    # After an error the partition is answered again even if nothing else moved.
    context = _context(cache, session_id, 4, {}, [], 8)
    order = [key for key, _ in context.partitions]
    answers = {("b", 0): start, ("a", 0): QUIET, ("a", 1): moved}
    _, kept = context.answer([answers[k] for k in order], 8)
    assert [k for k, _ in kept] == [("a", 0)]


def test_answered_partitions_move_to_the_end_of_the_session_order() -> None:
    cache = _cache()
    keys = [("t", i) for i in range(4)]
    session_id, _ = _context(cache, 0, 0, _named(*keys), [], 0).answer([QUIET] * 4, 0)
    context = _context(cache, session_id, 1, {}, [], 1)
    context.answer([DATA, QUIET, QUIET, QUIET], 1)
    context = _context(cache, session_id, 2, {}, [], 2)
    assert [key for key, _ in context.partitions] == [("t", 1), ("t", 2), ("t", 3), ("t", 0)]


def test_forgotten_partitions_leave_and_named_ones_join() -> None:
    cache = _cache()
    session_id = _open(cache, 3)
    context = _context(cache, session_id, 1, _named(("u", 0)), [("t", 1), ("zz", 9)], 1)
    assert [key for key, _ in context.partitions] == [("t", 0), ("t", 2), ("u", 0)]
    _, kept = context.answer([QUIET, QUIET, QUIET], 1)
    assert [k for k, _ in kept] == [("u", 0)]  # new to the client: its state is news


def test_unknown_sessions_and_wrong_epochs_are_refused_with_kafkas_errors() -> None:
    cache = _cache()
    session_id = _open(cache, 2)
    refusal = cache.new_context(session_id + 1, 1, {}, [], 1)
    assert isinstance(refusal, SessionRefusal)
    assert refusal.error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    refusal = cache.new_context(session_id, 2, {}, [], 1)
    assert isinstance(refusal, SessionRefusal)
    assert refusal.error_code == ErrorCode.INVALID_FETCH_SESSION_EPOCH
    assert "expects epoch 1" in refusal.message
    refusal = cache.new_context(0, 3, {}, [], 1)  # an incremental fetch needs an id
    assert isinstance(refusal, SessionRefusal)
    assert refusal.error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    _context(cache, session_id, 1, {}, [], 1)
    assert cache.stats.refusals == 3 and cache.stats.incremental_fetches == 1
    refusal = cache.new_context(session_id, 1, {}, [], 1)  # the same epoch twice
    assert isinstance(refusal, SessionRefusal)


def test_final_epoch_fetches_are_sessionless_and_close_the_named_session() -> None:
    cache = _cache()
    context = _context(cache, 0, -1, _named(("t", 0)), [], 0)
    assert context.answer([QUIET], 0) == (0, [(("t", 0), QUIET)])
    assert len(cache) == 0
    session_id = _open(cache, 1)
    context = _context(cache, session_id, -1, _named(("t", 0)), [], 1)
    assert len(cache) == 0 and context.answer([QUIET], 1)[0] == 0
    # A full fetch naming a session closes it and opens another.
    first = _open(cache, 1)
    second_context = _context(cache, first, 0, _named(("t", 0)), [], 2)
    assert cache.get(first) is None
    second, _ = second_context.answer([QUIET], 2)
    assert second not in (0, first) and len(cache) == 1


def test_a_full_cache_evicts_a_stale_session_first_then_a_smaller_one() -> None:
    cache = _cache(slots=2)
    small = _open(cache, 1, now_ms=0)
    large = _open(cache, 5, now_ms=1000)
    # Nothing stale, and a new session no larger than the smallest gets no slot.
    assert _open(cache, 1, now_ms=2000) == 0
    assert cache.get(small) is not None and cache.stats.evictions == 0
    # A larger one takes the smallest session's slot.
    medium = _open(cache, 3, now_ms=3000)
    assert medium != 0 and cache.get(small) is None and cache.stats.evictions == 1
    # Once a session is unused for the eviction time, even a small new one takes its slot
    # (the least recently used: ``large`` was used last at 1000, ``medium`` at 3000).
    tiny = _open(cache, 1, now_ms=1000 + cache.eviction_ms + 1)
    assert tiny != 0 and cache.get(large) is None and cache.get(medium) is not None


def test_no_slots_means_no_sessions() -> None:
    cache = _cache(slots=0)
    assert _open(cache, 3) == 0 and len(cache) == 0


def test_epochs_wrap_as_kafkas() -> None:
    assert next_epoch(0) == 1 and next_epoch(41) == 42
    assert next_epoch(2**31 - 1) == 1
    assert next_epoch(-1) == -1


# -- through the listener's Fetch translation ---------------------------------------------


def _fetch(
    session_id: int,
    epoch: int,
    partitions: list[tuple[str, int, int]],
    forgotten: tuple[tuple[str, int], ...] = (),
) -> Any:
    r = FetchRequest
    return r(
        max_wait_ms=100,
        min_bytes=1,
        max_bytes=1 << 20,
        session_id=session_id,
        session_epoch=epoch,
        topics=[
            r.FetchTopic(
                topic=topic,
                partitions=[
                    r.FetchTopic.FetchPartition(
                        partition=p, fetch_offset=offset, partition_max_bytes=1 << 16
                    )
                ],
            )
            for topic, p, offset in partitions
        ],
        forgotten_topics_data=[
            r.ForgottenTopic(topic=topic, partitions=[p]) for topic, p in forgotten
        ],
    )


def _translate(view: StaticView, request: Any, version: int = 11) -> Forward | Answer:
    header, schema, entity = received(request, version)
    return translate(schema, entity, view, Caller(header.client_id, ""))


def _decoded(body: Any, version: int = 11) -> Any:
    assert isinstance(body, RawBody)
    data = b"".join(bytes(p) for p in frame_parts(9, body.parts))
    return FetchResponse.decode(data, version=version, header=True, framed=True)


def _answer(native: m.FetchRequest, records: dict[tuple[str, int], bytes]) -> m.FetchResponse:
    return m.FetchResponse(
        [
            m.FetchPartitionResponse(
                p.topic, p.partition, 0, 20, 0, records.get((p.topic, p.partition), b"")
            )
            for p in native.partitions
        ]
    )


def _partitions(decoded: Any) -> list[tuple[str, int]]:
    return [(t.topic, p.partition_index) for t in decoded.responses for p in t.partitions]


def test_the_fetch_path_opens_a_session_and_answers_incremental_fetches() -> None:
    view = StaticView()
    full = _translate(view, _fetch(0, 0, [("a", 0, 0), ("a", 1, 0), ("b", 0, 0)]))
    assert isinstance(full, Forward)
    decoded = _decoded(full.reply(_answer(full.native, {})))
    session_id = decoded.session_id
    assert session_id != 0 and decoded.error_code == 0
    assert _partitions(decoded) == [("a", 0), ("a", 1), ("b", 0)]

    # The next fetch names only a moved partition; the node reads all three.
    step = _translate(view, _fetch(session_id, 1, [("a", 1, 5)], forgotten=(("b", 0),)))
    assert isinstance(step, Forward)
    assert [(p.topic, p.partition, p.fetch_offset) for p in step.native.partitions] == [
        ("a", 0, 0),
        ("a", 1, 5),
    ]
    decoded = _decoded(step.reply(_answer(step.native, {("a", 1): b"x" * 30})))
    assert decoded.session_id == session_id
    assert _partitions(decoded) == [("a", 1)]
    assert bytes(decoded.responses[0].partitions[0].records) == b"x" * 30

    # A failed read is news for every partition.
    step = _translate(view, _fetch(session_id, 2, []))
    assert isinstance(step, Forward)
    decoded = _decoded(step.fail(ErrorCode.NOT_LEADER_OR_FOLLOWER))
    assert {p.error_code for t in decoded.responses for p in t.partitions} == {6}
    assert len(_partitions(decoded)) == 2


def test_the_fetch_path_refuses_unknown_sessions_and_stale_epochs() -> None:
    view = StaticView()
    refused = _translate(view, _fetch(1234, 1, [("a", 0, 0)]))
    assert isinstance(refused, Answer)
    decoded = _decoded(refused.response)
    assert (decoded.error_code, decoded.session_id, decoded.responses) == (70, 0, [])
    full = _translate(view, _fetch(0, 0, [("a", 0, 0)]))
    assert isinstance(full, Forward)
    session_id = _decoded(full.reply(_answer(full.native, {}))).session_id
    refused = _translate(view, _fetch(session_id, 5, []))
    assert isinstance(refused, Answer)
    assert _decoded(refused.response).error_code == 71


@pytest.mark.parametrize("version", [4, 6])
def test_fetches_before_v7_have_no_session(version: int) -> None:
    view = StaticView()
    action = _translate(view, _fetch(0, 0, [("a", 0, 0)]), version)
    assert isinstance(action, Forward)
    decoded = _decoded(action.reply(_answer(action.native, {})), version)
    assert _partitions(decoded) == [("a", 0)] and len(view.sessions) == 0
