"""What docs/guarantees.md promises about power cuts, as the checker's expectation.

With a flush policy on the topic (``flush.ms`` or ``flush.messages``), an acknowledged
(acks=all) record is on the disk of every in-sync replica before it is acknowledged: no
power cut loses it, of one node or of all of them at once, and the checker excuses nothing.

Without one (the default, like Kafka), records live in the page cache until a segment rolls
or the node closes cleanly, so a record is lost only when every replica holding it loses
power: with ``min.insync.replicas`` copies at the acknowledgement, that takes at least that
many distinct nodes cut after it was sent. Such a record is excused; any other loss is a
violation (one cut node must never cost an acknowledged record: the controller moves
leadership and ISR places off a node that restarts, and it rejoins only once caught up).
"""

from __future__ import annotations

from collections.abc import Callable

from rillet.chaos.history import History, Write

POWER_KINDS = ("power-cut", "power-cut-all")


def power_cuts(history: History) -> list[tuple[float, int]]:
    """(time, node) of every node whose power was cut in the run."""
    return [
        (f.start_t, int(n))
        for f in history.faults
        if f.kind in POWER_KINDS and f.skipped is None
        for n in f.detail.get("cut", [])
    ]


def power_loss_excused(history: History) -> Callable[[Write], bool]:
    """Whether losing this acknowledged write is within the promise (see the module doc)."""
    config = history.meta.get("config", {})
    cuts = power_cuts(history)
    if not cuts or config.get("flush_ms") is not None:
        return lambda w: False
    copies = min(int(config.get("min_insync", 2)), int(config.get("replication_factor", 3)))

    def excused(w: Write) -> bool:
        return len({n for t, n in cuts if t >= w.invoke_t}) >= copies

    return excused


def partitions_with_excused_loss(
    history: History, found: Callable[[Write], bool]
) -> dict[int, int]:
    """Partition -> the lowest offset of an acknowledged write lost within the promise
    (``found`` says whether the final read has it). A consumer of such a partition can be
    past the new log end when the nodes come back: it resets, and what it commits next is
    below what it committed before. That follows from the excused loss, as in Kafka."""
    excused = power_loss_excused(history)
    lowest: dict[int, int] = {}
    for w in history.acknowledged():
        if w.offset is not None and not found(w) and excused(w):
            lowest[w.partition] = min(w.offset, lowest.get(w.partition, w.offset))
    return lowest
