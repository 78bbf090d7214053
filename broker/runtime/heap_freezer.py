"""Long-lived objects kept out of the garbage collector's full passes.

CPython's cycle collector now and then walks every object it tracks (a "generation 2" pass).
A node hosting 10,000 partition replicas holds a few million such objects, nearly all of
them for as long as the partitions exist, and each full pass over them held the event loop
250-1,000 ms, every 2-3 s while the partitions were written to, and freed almost nothing
(tens of objects). Every request, heartbeat and Raft message waited behind it.

The node therefore freezes the survivors of a slow full pass (``gc.freeze``: they move to a
permanent generation the collector no longer walks), so later passes walk only what is new.
While a node grows fast (creating thousands of partitions, their first writes) even "what
is new" took 25-100 ms a pass, every 2-4 s. So once a full pass has been slow, the node
freezes *instead of* the full passes that may fall due: when a young-generation pass
finishes with the oldest generation's count past its threshold, the survivors are frozen at
once (``gc.freeze`` resets the counts), and a full pass that would have walked them never
runs. (The collector also skips a due full pass while few objects await one, so this freezes
more often than full passes would run; a freeze costs nothing but keeps cycles among the
frozen until the next collect-all.) Young passes still free short-lived cycles as before.
Frozen objects are still freed as soon as nothing refers to them (reference counting); only
a reference cycle among them is not found while they are frozen. So every
``FULL_COLLECTION_INTERVAL_S`` the node thaws everything, collects once, and freezes again:
cycles left by deleted partitions, closed connections or rolled segments are freed then, at
the price of one full pass every ten minutes instead of one every few seconds.

:class:`FreezeDecider` decides (sans-I/O: times and pass durations come in as arguments);
:func:`run_heap_freezer` is its driver, the only code that touches the collector.
"""

from __future__ import annotations

import enum
import gc
import logging
import time
from typing import Any

import trio

log = logging.getLogger(__name__)

FREEZE_CHECK_INTERVAL_S = 1.0
# A full pass at least this slow: freeze what survived it.
SLOW_FULL_PASS_MS = 20.0
# Thaw, collect everything and freeze again this often (cycles among frozen objects).
FULL_COLLECTION_INTERVAL_S = 600.0
_OLDEST_GENERATION = 2


class HeapAction(enum.Enum):
    NONE = "none"
    FREEZE = "freeze"  # freeze everything tracked now (the survivors of a slow pass)
    COLLECT_ALL = "collect-all"  # thaw, collect every generation, freeze again


class FreezeDecider:
    """When to freeze and when to collect everything."""

    def __init__(
        self,
        now_s: float,
        slow_full_pass_ms: float = SLOW_FULL_PASS_MS,
        full_collection_interval_s: float = FULL_COLLECTION_INTERVAL_S,
    ) -> None:
        self._slow_ms = slow_full_pass_ms
        self._interval_s = full_collection_interval_s
        self._last_collect_all_s = now_s
        self._slow_pass_seen = False  # since the last action
        # The last full pass was slow: freeze instead of the next ones (until a full pass,
        # the collect-all's, is fast again).
        self.freezes_ahead = False
        self.frozen_ahead = 0  # full passes replaced by a freeze so far

    def full_pass_took(self, duration_ms: float) -> None:
        """The collector finished a full (oldest-generation) pass in ``duration_ms``."""
        slow = duration_ms >= self._slow_ms
        self.freezes_ahead = slow
        if slow:
            self._slow_pass_seen = True

    def full_pass_due(self) -> bool:
        """A full pass may fall due: True when the survivors should be frozen instead."""
        if self.freezes_ahead:
            self.frozen_ahead += 1
        return self.freezes_ahead

    def decide(self, now_s: float) -> HeapAction:
        if now_s - self._last_collect_all_s >= self._interval_s:
            self._last_collect_all_s = now_s
            self._slow_pass_seen = False
            return HeapAction.COLLECT_ALL
        if self._slow_pass_seen:
            self._slow_pass_seen = False
            return HeapAction.FREEZE
        return HeapAction.NONE

    def collecting_all(self) -> None:
        """A collect-all begins: no freeze in the middle of it (a young pass in another
        thread between the thaw and the collection would freeze everything again, and the
        collection would find nothing and look fast); its own pass sets the mode again."""
        self.freezes_ahead = False

    def acted(self) -> None:
        """The action was taken: the full pass it made itself is no reason to freeze."""
        self._slow_pass_seen = False


async def run_heap_freezer(
    check_interval_s: float = FREEZE_CHECK_INTERVAL_S,
    decider: FreezeDecider | None = None,
    *,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Watch the collector's full passes and act on the decider (cancel to stop; that
    thaws the heap, as a process may go on without the node)."""
    if decider is None:
        decider = FreezeDecider(trio.current_time())
    started: list[float] = []

    def on_collection(phase: str, info: dict[str, Any]) -> None:
        # Runs inside the collector, in whichever thread allocated: no logging (its locks)
        # and nothing that allocates much.
        generation = info.get("generation")
        if generation == _OLDEST_GENERATION:
            if phase == "start":
                started[:] = [time.perf_counter()]
            elif started:
                decider.full_pass_took((time.perf_counter() - started[0]) * 1000)
        elif (
            generation == _OLDEST_GENERATION - 1
            and phase == "stop"
            and gc.get_count()[_OLDEST_GENERATION] > gc.get_threshold()[_OLDEST_GENERATION]
            and decider.full_pass_due()
        ):
            gc.freeze()

    gc.callbacks.append(on_collection)
    task_status.started()
    frozen_ahead_logged = 0
    try:
        while True:
            await trio.sleep(check_interval_s)
            if decider.frozen_ahead != frozen_ahead_logged:
                log.debug(
                    "garbage collector: %d freezes instead of full passes",
                    decider.frozen_ahead - frozen_ahead_logged,
                )
                frozen_ahead_logged = decider.frozen_ahead
            action = decider.decide(trio.current_time())
            if action is HeapAction.NONE:
                continue
            start = time.perf_counter()
            if action is HeapAction.COLLECT_ALL:
                decider.collecting_all()
                gc.unfreeze()
                gc.collect()
            gc.freeze()
            decider.acted()
            # (No object count here: counting the frozen objects walks them all.)
            log.info(
                "garbage collector: %s (%.0f ms)",
                action.value,
                (time.perf_counter() - start) * 1000,
            )
    finally:
        gc.callbacks.remove(on_collection)
        gc.unfreeze()  # the node stops: its objects may be collected again
