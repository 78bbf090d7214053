"""CreatePartitions (handlers/partition_counts.py): topics only grow, within the node's
``max_partitions_per_topic``, decided by the controller (forwarded there once by another
node); validate-only changes nothing."""

from __future__ import annotations

from pathlib import Path

import trio
import trio.testing
from broker_context import middle
from voter_context import answer, voter

from rillet.broker.handlers.partition_counts import handle_create_partitions
from rillet.metadata_quorum.state import MetadataState
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import CreatePartitionsRequest, PartitionCount


def partitions_of(state: MetadataState, name: str) -> int:
    topic_id = state.topic_ids[name]
    return sum(1 for tid, _ in state.partitions if tid == topic_id)


async def test_topics_grow_and_never_shrink(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        await v.live_brokers(1)
        await v.topic("t", 2)
        await v.topic("u", 2)
        request = CreatePartitionsRequest(
            [
                PartitionCount("t", 4),
                PartitionCount("u", 1),
                PartitionCount("ghost", 3),
                PartitionCount("big", 1_000_000),
                PartitionCount("dup", 2),
                PartitionCount("dup", 3),
            ]
        )
        grown = await answer(handle_create_partitions(v.ctx, request))
        assert [(r.name, r.error_code) for r in grown.topics] == [
            ("t", ErrorCode.NONE),
            ("u", ErrorCode.INVALID_PARTITIONS),
            ("ghost", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
            ("big", ErrorCode.INVALID_PARTITIONS),
            ("dup", ErrorCode.INVALID_REQUEST),
            ("dup", ErrorCode.INVALID_REQUEST),
        ]
        assert (partitions_of(v.state, "t"), partitions_of(v.state, "u")) == (4, 2)
        assert grown.metadata_offset == v.state.last_applied_index
        checked = await answer(
            handle_create_partitions(
                v.ctx, CreatePartitionsRequest([PartitionCount("t", 6)], validate_only=True)
            )
        )
        assert [r.error_code for r in checked.topics] == [ErrorCode.NONE]
        assert partitions_of(v.state, "t") == 4
        broker = await v.broker_only(tmp_path / "broker")
        forwarded = await answer(
            handle_create_partitions(broker, CreatePartitionsRequest([PartitionCount("u", 3)]))
        )
        assert [r.error_code for r in forwarded.topics] == [ErrorCode.NONE]
        assert partitions_of(broker.metadata.state, "u") == 3
    elsewhere = middle(tmp_path / "other").ctx
    refused = await answer(
        handle_create_partitions(
            elsewhere, CreatePartitionsRequest([PartitionCount("t", 9)], forwarded=True)
        )
    )
    assert [r.error_code for r in refused.topics] == [ErrorCode.NOT_CONTROLLER]
