"""InitProducerId for idempotent producers (handlers/producer_ids.py): ids from this broker's
block, fetched from the controller's AllocateProducerIds when used up (here through the
voter's own handler, in-process); COORDINATOR_NOT_AVAILABLE while the broker has no block
to hand out. (The transactional path is in test_transactions.)"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import trio
import trio.testing
from broker_context import middle
from voter_context import answer, voter

from rillet.broker.handlers.producer_ids import handle_init_producer_id
from rillet.broker.replica.producer_ids import ProducerIdSource
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import InitProducerIdRequest


async def test_ids_come_from_the_brokers_block_and_none_without_one(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        await v.live_brokers(1, 2)
        broker = await v.broker_only(tmp_path / "broker", node_id=2)
        epoch: list[int | None] = [None]  # not registered yet
        source = ProducerIdSource(
            2, cast(Any, broker.metadata.link), broker.metadata.auth, lambda: epoch[0], 5.0
        )
        ctx = replace(broker, producer_ids=source)
        early = await answer(handle_init_producer_id(ctx, InitProducerIdRequest()))
        assert early.error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE
        assert "not registered" in (early.error_message or "")
        registered = v.state.brokers[2].broker_epoch
        epoch[0] = registered
        first = await answer(handle_init_producer_id(ctx, InitProducerIdRequest()))
        second = await answer(handle_init_producer_id(ctx, InitProducerIdRequest()))
        assert (first.error_code, first.producer_epoch) == (ErrorCode.NONE, 0)
        assert second.producer_id == first.producer_id + 1  # from the same block
        assert v.state.next_producer_id > second.producer_id  # the block is the controller's
        epoch[0] = registered - 1  # a stale epoch: the controller refuses the next block
        stale_source = ProducerIdSource(
            2, cast(Any, broker.metadata.link), broker.metadata.auth, lambda: epoch[0], 5.0
        )
        refused = await answer(
            handle_init_producer_id(
                replace(broker, producer_ids=stale_source), InitProducerIdRequest()
            )
        )
        assert refused.error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE
        assert "UNKNOWN_MEMBER_ID" in (refused.error_message or "")
    no_source = await answer(
        handle_init_producer_id(middle(tmp_path / "m").ctx, InitProducerIdRequest())
    )
    assert no_source.error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE
