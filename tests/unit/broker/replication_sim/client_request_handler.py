"""What a broker does for clients: acks=all produce, "who leads?" queries, and consumer
reads up to the high watermark.

Why a module of its own: it is the copy of handlers/produce.py (the acks=all verdict for
each batch) and the two reads that tell the checker what was promised to a client: an
acknowledgement, or records shown below a high watermark.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

from rillet.wire.error_codes import ErrorCode

from .broker_process import BrokerProcess
from .in_flight import AcksWaiter
from .messages import ProduceReq, ProduceResp
from .topology import CONSUMER, PRODUCER


class ClientRequestHandler(BrokerProcess):
    """The broker's answers to clients: handlers/produce.py (acks=all), leader queries and
    consumer reads."""

    def on_produce(self, req: ProduceReq) -> None:
        sim = self.sim
        r = self.replica
        if r is None or not r.is_leader:
            self._produce_answer(req.payload, ErrorCode.NOT_LEADER_OR_FOLLOWER)
            return
        if r.in_sync_count() < sim.config.min_insync_replicas:
            self._produce_answer(req.payload, ErrorCode.NOT_ENOUGH_REPLICAS)
            return
        batch = r.append_as_leader(req.count, req.payload)
        sim.checker.leader_appended(self, batch)
        waiter = AcksWaiter(batch.end, batch)
        if r.high_watermark >= waiter.target and r.is_leader:
            self.acks_resolved(waiter, reached=True)
            return
        r.waiters.append(waiter)
        sim.later(self, sim.config.produce_timeout_ms, self._produce_timeout, waiter)

    def _produce_timeout(self, waiter: AcksWaiter) -> None:
        r = self.replica
        if not waiter.resolved and r is not None and waiter in r.waiters:
            r.waiters.remove(waiter)
            self.acks_resolved(waiter, reached=False)

    def acks_resolved(self, waiter: AcksWaiter, reached: bool) -> None:
        """_await_high_watermarks' verdict for one batch."""
        if waiter.resolved:
            return
        waiter.resolved = True
        r = self.replica
        min_isr = self.sim.config.min_insync_replicas
        b = waiter.batch
        if reached:
            if r is None or r.in_sync_count() >= min_isr:
                self._produce_answer(b.payload, ErrorCode.NONE, b.base, b.count)
            else:
                self._produce_answer(b.payload, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND)
        elif r is None or not r.is_leader:
            self._produce_answer(b.payload, ErrorCode.NOT_LEADER_OR_FOLLOWER)
        elif r.in_sync_count() < min_isr:
            self._produce_answer(b.payload, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND)
        else:
            self._produce_answer(b.payload, ErrorCode.REQUEST_TIMED_OUT)

    def _produce_answer(
        self, payload: int, code: ErrorCode, base: int = -1, count: int = 0
    ) -> None:
        self.sim.stats[f"produce {code.name}"] += 1
        resp = ProduceResp(payload, code, base, count)
        self.sim.send(self.node_id, PRODUCER, self.sim.producer.on_response, resp)

    # -- clients' metadata and consumer reads --------------------------------------------------

    def on_leader_query(self, asker: Callable[[int, int], None]) -> None:
        p = self.partition()
        leader = p.leader if p is not None else -1
        self.sim.send(self.node_id, PRODUCER, lambda _: asker(self.node_id, leader), None)

    def on_consumer_fetch(self, _: None) -> None:
        """A consumer reads up to the high watermark from whoever believes it leads."""
        r = self.replica
        if r is None or not r.is_leader:
            return
        hw = r.high_watermark
        end = bisect.bisect_left(r.log.bases, hw)
        visible = tuple(r.log.batches[:end])
        self.sim.send(
            self.node_id,
            CONSUMER,
            lambda _: self.sim.checker.consumer_saw(self.node_id, hw, visible),
            None,
        )
