"""The simulated clients: an acks=all producer and a consumer.

Why they exist: the invariants are about promises made to clients. The producer's
acknowledgements and the records the consumer is shown below a high watermark are what the
checker holds every replica to; the producer's retries after errors and timeouts are also
what keeps the leader busy through the faults.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rillet.wire.error_codes import ErrorCode

from .messages import ProduceReq, ProduceResp
from .topology import BROKERS, CONSUMER, PRODUCER

if TYPE_CHECKING:
    from .simulation import Simulation


@dataclass(slots=True)
class Message:
    count: int
    attempt: int | None = None  # payload id of the attempt in flight
    not_before: int = 0


class Producer:
    """An acks=all producer: a few messages in flight, each retried (as a new attempt,
    with a new payload id) after an error or a timeout against the leader it believes in."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.leader: int | None = None
        self.outstanding: dict[int, Message] = {}  # message id -> state
        self.attempt_of: dict[int, int] = {}  # payload id -> message id
        self.next_message = 0
        self.refreshing = False

    def tick(self) -> None:
        sim = self.sim
        sim.at(sim.now + sim.config.producer_tick_ms, self.tick)
        while (
            sim.now < sim.config.fault_ms and len(self.outstanding) < sim.config.producer_in_flight
        ):
            self.outstanding[self.next_message] = Message(sim.rng.randint(1, 3))
            self.next_message += 1
        if self.leader is None:
            self.refresh()
            return
        for mid, m in self.outstanding.items():
            if m.attempt is None and m.not_before <= sim.now:
                self._send(mid, m, self.leader)

    def _send(self, mid: int, m: Message, leader: int) -> None:
        sim = self.sim
        payload = sim.next_id()
        m.attempt = payload
        self.attempt_of[payload] = mid
        target = sim.brokers[leader]
        sim.send(PRODUCER, leader, target.on_produce, ProduceReq(payload, m.count))
        sim.at(sim.now + sim.config.request_timeout_ms + 100, self._timeout, mid, payload)

    def _timeout(self, mid: int, payload: int) -> None:
        m = self.outstanding.get(mid)
        if m is not None and m.attempt == payload:
            m.attempt = None
            self.refresh()

    def on_response(self, resp: ProduceResp) -> None:
        sim = self.sim
        mid = self.attempt_of.get(resp.payload)
        if resp.error == ErrorCode.NONE:
            sim.checker.acked(resp.payload, resp.base_offset, resp.count)
            if mid is not None:
                self.outstanding.pop(mid, None)
            return
        m = self.outstanding.get(mid) if mid is not None else None
        if m is not None and m.attempt == resp.payload:
            m.attempt = None
            m.not_before = sim.now + 20
            self.refresh()

    def refresh(self) -> None:
        """Ask a random broker who leads (its metadata may be stale, as a real one's is)."""
        if self.refreshing:
            return
        self.refreshing = True
        sim = self.sim
        broker = sim.brokers[sim.rng.choice(BROKERS)]
        sim.send(PRODUCER, broker.node_id, broker.on_leader_query, self._learned)
        sim.at(sim.now + 100, self._refresh_timeout)

    def _learned(self, _broker: int, leader: int) -> None:
        self.refreshing = False
        self.leader = leader if leader >= 0 else None

    def _refresh_timeout(self) -> None:
        self.refreshing = False

    @property
    def done(self) -> bool:
        return not self.outstanding and self.sim.now >= self.sim.config.fault_ms


class Consumer:
    """Reads, every ``consumer_every_ms``, from a random broker: one that believes it leads
    answers with what lies below its high watermark (see
    :meth:`~.client_request_handler.ClientRequestHandler.on_consumer_fetch`)."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim

    def tick(self) -> None:
        sim = self.sim
        sim.at(sim.now + sim.config.consumer_every_ms, self.tick)
        b = sim.brokers[sim.rng.choice(BROKERS)]
        sim.send(CONSUMER, b.node_id, b.on_consumer_fetch, None)
