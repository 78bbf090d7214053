"""A follower's fetch in a fetch session (handle_session_fetch in handlers/fetch.py; the
plain fetch has its own tests): it reads what ``to_read`` names, answers only the entries
``keeps`` keeps, does not wait when partitions were left for the next read, and refuses a
follower without the cluster's proof on every partition."""

from __future__ import annotations

from pathlib import Path

import trio
import trio.testing
from broker_context import EPOCH_MS, NODE_ID, middle

from rillet.broker.handlers.fetch import handle_session_fetch
from rillet.broker.handlers.produce import handle_produce
from rillet.wire.batch import build_batch
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import (
    FetchPartition,
    FetchPartitionResponse,
    FetchRequest,
    ProducePartitionData,
    ProduceRequest,
)

FOLLOWER = 2


def follower_fetch(auth: bytes, max_wait_ms: int = 5_000, min_bytes: int = 1) -> FetchRequest:
    parts = [FetchPartition("t", p, 0, 1 << 20, 1) for p in (0, 1)]
    return FetchRequest(max_wait_ms, min_bytes, 1 << 20, parts, FOLLOWER, auth)


def with_news(p: FetchPartitionResponse) -> bool:
    return p.error_code != ErrorCode.NONE or p.log_end_offset > 0


async def test_only_partitions_with_news_are_answered_and_a_left_over_read_does_not_wait(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    m = middle(tmp_path)
    for p in (0, 1):
        m.host("t", p, isr=(NODE_ID, FOLLOWER), replicas=(NODE_ID, FOLLOWER))
    records = build_batch([(EPOCH_MS, None, b"v", None)] * 2)
    handle_produce(m.ctx, ProduceRequest(1, 30_000, [ProducePartitionData("t", 0, records)]))
    read: list[list[int]] = []

    def everything(req: FetchRequest, now_ms: int) -> tuple[FetchRequest, bool]:
        read.append([p.partition for p in req.partitions])
        return req, False

    auth = m.ctx.metadata.auth.token
    answer = await handle_session_fetch(m.ctx, follower_fetch(auth), everything, with_news)
    assert [(p.partition, p.error_code, p.log_end_offset) for p in answer.partitions] == [
        (0, ErrorCode.NONE, 2)
    ]
    assert read == [[0, 1]]

    def first_only(req: FetchRequest, now_ms: int) -> tuple[FetchRequest, bool]:
        return FetchRequest(
            req.max_wait_ms, req.min_bytes, req.max_bytes, req.partitions[1:], FOLLOWER, auth
        ), True

    start = trio.current_time()
    quick = await handle_session_fetch(
        m.ctx, follower_fetch(auth, min_bytes=1 << 20), first_only, with_news
    )
    assert quick.partitions == [] and trio.current_time() == start  # no long poll
    await m.replicas.close_all()


async def test_a_follower_without_the_cluster_proof_is_refused(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    m = middle(tmp_path)
    m.host("t", 0, isr=(NODE_ID, FOLLOWER), replicas=(NODE_ID, FOLLOWER))
    answer = await handle_session_fetch(
        m.ctx, follower_fetch(b"forged"), lambda req, now: (req, False), with_news
    )
    assert [(p.partition, p.error_code) for p in answer.partitions] == [
        (0, ErrorCode.AUTHENTICATION_FAILED),
        (1, ErrorCode.AUTHENTICATION_FAILED),
    ]
    await m.replicas.close_all()
