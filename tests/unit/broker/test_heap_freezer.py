"""A node freezes the survivors of a slow full garbage collection, and thaws and collects
everything every FULL_COLLECTION_INTERVAL_S."""

from __future__ import annotations

import gc

import trio

from rillet.broker.runtime.heap_freezer import FreezeDecider, HeapAction, run_heap_freezer


def test_a_slow_full_pass_is_followed_by_one_freeze() -> None:
    decider = FreezeDecider(now_s=0.0, slow_full_pass_ms=20, full_collection_interval_s=600)
    assert decider.decide(1.0) is HeapAction.NONE
    decider.full_pass_took(5)  # fast: nothing to gain
    assert decider.decide(2.0) is HeapAction.NONE
    decider.full_pass_took(300)
    decider.full_pass_took(40)
    assert decider.decide(3.0) is HeapAction.FREEZE
    assert decider.decide(4.0) is HeapAction.NONE


def test_everything_is_collected_every_interval() -> None:
    decider = FreezeDecider(now_s=0.0, slow_full_pass_ms=20, full_collection_interval_s=600)
    decider.full_pass_took(300)
    assert decider.decide(600.0) is HeapAction.COLLECT_ALL  # and no freeze on top of it
    assert decider.decide(601.0) is HeapAction.NONE
    assert decider.decide(1199.0) is HeapAction.NONE
    assert decider.decide(1200.0) is HeapAction.COLLECT_ALL


def test_the_pass_an_action_makes_itself_asks_for_nothing_more() -> None:
    decider = FreezeDecider(now_s=0.0, slow_full_pass_ms=20, full_collection_interval_s=600)
    assert decider.decide(600.0) is HeapAction.COLLECT_ALL
    decider.full_pass_took(500)  # the collect-all's own pass
    decider.acted()
    assert decider.decide(601.0) is HeapAction.NONE


async def test_the_driver_freezes_after_a_full_pass_and_thaws_when_stopped() -> None:
    gc.unfreeze()
    decider = FreezeDecider(trio.current_time(), slow_full_pass_ms=0)  # every pass is slow
    async with trio.open_nursery() as nursery:
        await nursery.start(run_heap_freezer, 0.01, decider)
        gc.collect()
        with trio.fail_after(5):
            while gc.get_freeze_count() == 0:
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    assert gc.get_freeze_count() == 0


def test_after_a_slow_full_pass_due_passes_become_freezes_until_one_is_fast() -> None:
    decider = FreezeDecider(now_s=0.0, slow_full_pass_ms=20, full_collection_interval_s=600)
    assert not decider.full_pass_due()  # the heap is small: let the collector walk it
    decider.full_pass_took(60)
    assert decider.full_pass_due() and decider.full_pass_due()
    assert decider.frozen_ahead == 2
    decider.full_pass_took(3)  # e.g. the collect-all after the partitions were deleted
    assert not decider.full_pass_due()
    assert decider.frozen_ahead == 2


async def test_the_driver_freezes_instead_of_the_full_passes_that_fall_due() -> None:
    """Once a full pass was slow, allocating keeps the collector's young passes going but
    no full pass runs: each one that falls due is replaced by a freeze."""
    gc.unfreeze()
    full_passes: list[str] = []

    def count_full(phase: str, info: dict[str, object]) -> None:
        if info.get("generation") == 2 and phase == "start":
            full_passes.append(phase)

    decider = FreezeDecider(trio.current_time(), slow_full_pass_ms=0)  # every pass is slow
    async with trio.open_nursery() as nursery:
        await nursery.start(run_heap_freezer, 0.01, decider)
        gc.collect()  # a "slow" full pass: from now on, freeze instead
        gc.callbacks.append(count_full)
        try:
            kept = [[i] for i in range(200_000)]  # ~20 due full passes' worth of survivors
        finally:
            gc.callbacks.remove(count_full)
        assert decider.frozen_ahead >= 1 and gc.get_freeze_count() >= len(kept)
        assert full_passes == []
        nursery.cancel_scope.cancel()
    assert gc.get_freeze_count() == 0


def test_a_collect_all_is_not_frozen_ahead_of_and_its_pass_sets_the_mode() -> None:
    decider = FreezeDecider(now_s=0.0, slow_full_pass_ms=20, full_collection_interval_s=600)
    decider.full_pass_took(60)
    assert decider.decide(600.0) is HeapAction.COLLECT_ALL
    decider.collecting_all()
    assert not decider.full_pass_due()  # between the thaw and the collection
    decider.full_pass_took(400)  # the collect-all's pass: the heap is still large
    decider.acted()
    assert decider.full_pass_due()
