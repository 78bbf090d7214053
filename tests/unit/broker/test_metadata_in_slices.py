"""A Metadata answer that must build many partition entries (the first answer for a new
10,000-partition topic, about 80 ms of work) is built after the handler returns, yielding
to the event loop between slices; a cheap one is answered at once."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
from broker_context import middle

from rillet.broker.handlers import metadata as metadata_handler
from rillet.broker.handlers.metadata import handle_metadata, handle_metadata_request
from rillet.broker.runtime import loop_slices
from rillet.metadata_quorum.records import PartitionRecord, TopicRecord
from rillet.wire.messages import MetadataRequest, MetadataResponse

PARTITIONS = 40


async def test_a_large_answer_is_built_in_slices_and_a_kept_one_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loop_slices, "SLICE_S", 0.0)  # every entry uses up a slice
    monkeypatch.setattr(metadata_handler, "SLICED_BUILD_PARTITIONS", 10)
    m = middle(tmp_path)
    records: list[object] = [PartitionRecord("t1", p, [1, 2], [1, 2], 1) for p in range(PARTITIONS)]
    records.append(TopicRecord("big", "t1", {}))
    m.ctx.metadata.state.apply_entry(1, records)  # type: ignore[arg-type]
    request = MetadataRequest(["big"])
    other_turns = 0

    async def other_task() -> None:
        nonlocal other_turns
        for _ in range(PARTITIONS * 2):
            other_turns += 1
            await trio.lowlevel.checkpoint()

    deferred = handle_metadata_request(m.ctx, request)
    assert not isinstance(deferred, MetadataResponse)  # a coroutine: built later
    async with trio.open_nursery() as nursery:
        nursery.start_soon(other_task)
        answer = await deferred
        turns_during_build = other_turns
    assert turns_during_build >= PARTITIONS // 2  # the loop ran other work between entries
    assert answer == handle_metadata(m.ctx, request)
    assert len(answer.topics[0].partitions) == PARTITIONS
    again = handle_metadata_request(m.ctx, request)
    assert isinstance(again, MetadataResponse)  # kept: answered at once
    assert again.topics[0] is answer.topics[0]


async def test_a_small_topic_is_answered_at_once(tmp_path: Path) -> None:
    m = middle(tmp_path)
    m.ctx.metadata.state.apply_entry(  # type: ignore[arg-type]
        1, [PartitionRecord("t1", 0, [1], [1], 1), TopicRecord("small", "t1", {})]
    )
    answer = handle_metadata_request(m.ctx, MetadataRequest(None))
    assert isinstance(answer, MetadataResponse)
    assert [t.name for t in answer.topics] == ["small"]
