"""read_committed: which fetched batches a consumer keeps (Kafka's consumer algorithm).

A read_committed Fetch returns whole batches below the partition's last stable offset and
the transactions aborted in that range (producer id, first offset). Walking the batches in
offset order, a producer becomes "aborted" once the walk reaches the first offset of one of
its aborted transactions; its transactional batches are dropped until its abort marker
(which ends that transaction), and every control batch is dropped. Nothing is decoded but
the abort markers' keys, so the filter costs next to nothing per record.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable

from rillet.client.errors import CorruptMessageError
from rillet.wire.batch import ATTR_CONTROL, ATTR_TRANSACTIONAL, BatchHeader
from rillet.wire.control_batch import ControlType, read_marker
from rillet.wire.errors import WireError
from rillet.wire.messages import AbortedTransaction

Positioned = tuple[int, BatchHeader]  # a batch's byte position in the fetched data, its header


def committed_batches(
    data: bytes | memoryview,
    batches: list[Positioned],
    aborted: Iterable[AbortedTransaction],
    where: str,
) -> list[Positioned]:
    """The batches of ``batches`` (in offset order, positions into ``data``) a read_committed
    consumer returns: no control batch, no batch of an aborted transaction. Raises
    CorruptMessageError naming ``where`` when an abort marker does not decode."""
    pending = [(a.first_offset, a.producer_id) for a in aborted]
    heapq.heapify(pending)
    aborting: set[int] = set()
    out: list[Positioned] = []
    for position, h in batches:
        while pending and pending[0][0] <= h.last_offset:
            aborting.add(heapq.heappop(pending)[1])
        if h.attributes & ATTR_CONTROL:
            if h.producer_id in aborting and _is_abort(data, position, where):
                aborting.discard(h.producer_id)
            continue
        if h.attributes & ATTR_TRANSACTIONAL and h.producer_id in aborting:
            continue
        out.append((position, h))
    return out


def _is_abort(data: bytes | memoryview, position: int, where: str) -> bool:
    try:
        marker = read_marker(data, position)
    except WireError as exc:
        raise CorruptMessageError(f"corrupt transaction marker in {where}: {exc}") from exc
    return marker is not None and marker.control_type is ControlType.ABORT
