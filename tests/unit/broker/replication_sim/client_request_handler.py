"""What a broker does for clients: acks=all produce, "who leads?" queries, and consumer
reads up to the high watermark.

Why a module of its own: it schedules handlers/produce.py's acks=all path (the real
replica appends and decides when a wait ends; the handler's own steps refuse, and answer
each wait once it ended: ``acks_all_refusal``, ``acks_all_answer``) and holds the two reads
that tell the checker what was promised to a client: an acknowledgement, or records shown
below a high watermark.
"""

from __future__ import annotations

from collections.abc import Callable

from rillet.broker.replica.replication.acks_verdict import acks_all_answer, acks_all_refusal
from rillet.wire.error_codes import ErrorCode

from .broker_process import BrokerProcess
from .in_flight import AcksWaiter
from .messages import ProduceReq, ProduceResp
from .partition_log import Batch, encode_batch
from .topology import CONSUMER, PRODUCER


class ClientRequestHandler(BrokerProcess):
    """The broker's answers to clients: handlers/produce.py's acks=all path on the real
    replica, leader queries and consumer reads."""

    def on_produce(self, req: ProduceReq) -> None:
        sim = self.sim
        r = self.replica
        if r is None or not r.is_leader:
            self._produce_answer(req.payload, ErrorCode.NOT_LEADER_OR_FOLLOWER)
            return
        refusal = acks_all_refusal(r)
        if refusal is not None:
            self._produce_answer(req.payload, refusal[0])
            return
        info = r.append_as_leader(encode_batch(req.count, req.payload), sim.now)
        batch = Batch(info.first_offset, req.count, r.leader_epoch, req.payload)
        sim.checker.leader_appended(self, batch)
        waiter = AcksWaiter(batch.end, batch)
        self.acks_waiters.append(waiter)
        sim.later(self, sim.config.produce_timeout_ms, self._produce_timeout, waiter)
        self.settle_acks()

    def settle_acks(self) -> None:
        """Answer the waits the replica has decided (``acks_progress``); run after every
        event, as trio would run the produce handlers its waiters wake."""
        if not self.acks_waiters:
            return
        r = self.replica
        still = []
        for waiter in self.acks_waiters:
            progress = r.acks_progress(waiter.target, waiter.batch.epoch) if r else False
            if progress is None:
                still.append(waiter)
            else:
                self._acks_resolved(waiter, progress)
        self.acks_waiters = still

    def _produce_timeout(self, waiter: AcksWaiter) -> None:
        if not waiter.resolved and waiter in self.acks_waiters:
            self.acks_waiters.remove(waiter)
            self._acks_resolved(waiter, reached=False)

    def _acks_resolved(self, waiter: AcksWaiter, reached: bool) -> None:
        """_await_high_watermarks' end of one wait: the handler's own step."""
        if waiter.resolved:
            return
        waiter.resolved = True
        b = waiter.batch
        r = self.replica
        code, _ = acks_all_answer(r, waiter.target, b.epoch, reached)
        if code == ErrorCode.NONE:
            plog = r.log if r is not None else None
            if plog is not None and plog.config.forces_fsync and plog.recovery_point < b.end:
                self.sim.checker.fail(
                    f"{self} acknowledged {b} before fsyncing it (recovery point "
                    f"{plog.recovery_point}) although the topic forces fsyncs"
                )
            if plog is not None and plog.config.forces_fsync:
                self.sim.stats["acks after fsync"] += 1
            self._produce_answer(b.payload, code, b.base, b.count)
        else:
            self._produce_answer(b.payload, code)

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
        visible = self.log.visible(hw)
        self.sim.send(
            self.node_id,
            CONSUMER,
            lambda _: self.sim.checker.consumer_saw(self.node_id, hw, visible),
            None,
        )
