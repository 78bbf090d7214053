"""The simulation of one run, and :func:`run_seed`, which runs one seed to its verdict.

Why a module of its own: this is the discrete-event core everything else is scheduled on
(the clock, the event queue, timers that die with a crashed process or wait out a paused
one, and a lossy, duplicating, reordering network), and the loop that runs the checker
after every event until the healed cluster is quiescent or a rule breaks.
"""

from __future__ import annotations

import heapq
import os
import random
import tempfile
import traceback
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from .broken_variants import (
    cycle_type_for,
    poll_type_for,
    replica_type_for,
    settlement_for,
    voter_choice_type_for,
)
from .broker import SimBroker
from .checker import Checker
from .clients import Consumer, Producer
from .config import SimConfig
from .controller import SimController
from .fault_schedule import FaultSchedule
from .messages import ControllerReq, ProduceReq
from .outcome import SimResult, Violation
from .topology import BROKERS, VOTERS

if TYPE_CHECKING:
    from .broken_variants import Bug
    from .broker_process import BrokerProcess


class Simulation:
    """The world of one run: a virtual clock and its event queue, the network between the
    parties, and the parties themselves. One event runs at a time, in (time, scheduling
    order), so a run is a pure function of its seed."""

    def __init__(
        self,
        seed: int,
        workdir: Path,
        bug: Bug | None = None,
        trace: bool = False,
    ) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.config = SimConfig.for_seed(self.rng, random.Random(-1 - seed))
        self.workdir = workdir
        self.log_config = self.config.log_config()
        self.bug = bug
        self.replica_type = replica_type_for(bug)
        self.settlement = settlement_for(bug)
        self.cycle_type = cycle_type_for(bug)
        self.voter_choice_type = voter_choice_type_for(bug)
        self.poll_type = poll_type_for(bug)
        self.now = 0
        self._seq = 0
        self._ids = 0
        self._queue: list[tuple[int, int, Callable[..., Any], tuple[Any, ...]]] = []
        self.trace: deque[str] | None = deque(maxlen=400) if trace else None
        self.brokers = {n: SimBroker(self, n) for n in BROKERS}
        self.controller = SimController(self)
        self.producer = Producer(self)
        self.checker = Checker(self)
        self.consumer = Consumer(self)
        self.faults = FaultSchedule(self)
        self.cut: set[tuple[int, int]] = set()
        self.loss = self.config.loss
        self.duplication = self.config.duplication
        self.events = 0
        self.healed = False
        self.stats: Counter[str] = Counter()  # which paths the run went through

    # -- plumbing ------------------------------------------------------------------------------

    def next_id(self) -> int:
        self._ids += 1
        return self._ids

    def trace_line(self, line: str) -> None:
        if self.trace is not None:
            self.trace.append(f"{self.now:>6} {line}")

    def at(self, when: int, fn: Callable[..., Any], *args: Any) -> None:
        self._seq += 1
        heapq.heappush(self._queue, (when, self._seq, fn, args))

    def later(self, broker: BrokerProcess, delay: int, fn: Callable[..., Any], *args: Any) -> None:
        """A timer of ``broker``'s current process: dropped if it crashes meanwhile, held
        while it is paused."""
        self.at(self.now + delay, self.run_on_broker, broker, broker.incarnation, fn, args)

    def run_on_broker(
        self, broker: BrokerProcess, incarnation: int, fn: Callable[..., Any], args: tuple[Any, ...]
    ) -> Any:
        if not broker.up or broker.incarnation != incarnation:
            return None
        if broker.paused:
            broker.deferred.append((fn, args))
            return None
        return fn(*args)

    def send(self, src: int, dst: int, handler: Callable[[Any], Any], msg: Any) -> None:
        """Deliver ``msg`` to ``handler`` after a seeded delay, unless the network loses it;
        sometimes twice. A message to a broker reaches only the process it was sent to.

        Produce requests are never duplicated: a duplicate append is the idempotent
        producer's business (sequence numbers), not replication's, and a producer's retry
        is modelled as a new attempt with its own payload id. Requests to the voters are
        not either (see below); their answers, and every other message, may be.
        """
        if (src, dst) in self.cut or self.rng.random() < self.loss:
            return
        duplicate = self.rng.random() < self.duplication and not isinstance(msg, ProduceReq)
        copies = 2 if duplicate else 1
        for copy in range(copies):
            delay = 1 + int(self.rng.expovariate(1 / self.config.delay_mean_ms))
            if self.rng.random() < self.config.delay_spike:
                delay += self.rng.randint(20, 200)
            if copy and isinstance(msg, ControllerReq):
                # A request reaches a voter once per attempt, as over one TCP connection
                # (the draws are kept so that every other message keeps its schedule); the
                # link's retries are attempts of their own, whose ambiguity the call marks
                # (Finished.after_unanswered). A second copy answered after its twin was
                # refused made a leader drop a member the controller then added (seeds 692
                # and 1153 of the 10,000-seed sweep): a duplicate no connection delivers.
                continue
            if dst in self.brokers:
                broker = self.brokers[dst]
                self.at(
                    self.now + delay,
                    self.run_on_broker,
                    broker,
                    broker.incarnation,
                    handler,
                    (msg,),
                )
            else:
                self.at(self.now + delay, handler, msg)

    # -- running ---------------------------------------------------------------------------------

    def quiescent(self) -> bool:
        ctl = self.controller
        if ctl.ctl is None or ctl.topic_id is None or not self.producer.done:
            return False
        p = ctl.state.partitions[ctl._key()]
        if p.leader < 0 or sorted(p.isr) != list(BROKERS):
            return False
        if any(ctl.state.brokers[n].fenced for n in BROKERS):
            return False
        ends = set()
        for b in self.brokers.values():
            r = b.replica
            if not b.up or b.paused or r is None or r.role is None:
                return False
            if b.metadata.last_applied_index != ctl.state.last_applied_index:
                return False
            if r.high_watermark != r.log.log_end_offset:
                return False
            ends.add(r.log.log_end_offset)
        leader = self.brokers[p.leader].replica
        return (
            len(ends) == 1
            and leader is not None
            and leader.leader is not None
            and leader.leader.pending is None
        )

    async def run(self) -> SimResult:
        self.controller.cluster.elect(VOTERS[0])
        self.controller.become_active()
        self.at(0, self.controller.tick)
        for b in self.brokers.values():
            self.at(self.rng.randint(0, 20), b.start)
        self.at(100, self.producer.tick)
        self.at(50, self.consumer.tick)
        self.at(self.config.fault_ms // 6, self.faults.strike)
        self.at(self.config.fault_ms, self.faults.heal)
        deadline = self.config.fault_ms + self.config.heal_limit_ms
        violation: str | None = None
        try:
            while self._queue:
                when, _, fn, args = heapq.heappop(self._queue)
                self.now = when
                if when > deadline:
                    raise Violation(
                        f"no quiescence {self.config.heal_limit_ms}ms after healing: "
                        f"{self.describe()}"
                    )
                result = fn(*args)
                if isinstance(result, Awaitable):
                    await result
                self._run_woken()
                self.events += 1
                self.checker.step()
                if self.healed and self.events % 16 == 0 and self.quiescent():
                    self.checker.final()
                    break
        except Violation as exc:
            violation = f"t={self.now}ms: {exc}"
        except Exception:  # a pure core raising is a finding too
            violation = f"t={self.now}ms: exception\n{traceback.format_exc()}"
        return SimResult(
            self.seed,
            violation,
            self.events,
            self.now,
            len(self.checker.acks),
            len(self.checker.writers),
            self.stats,
            list(self.trace) if self.trace is not None else [],
        )

    def _run_woken(self) -> None:
        """What the real replicas woke in this event: parked follower fetches whose log end
        moved, acks=all waits that were decided (on a node, trio runs those tasks next)."""
        for b in self.brokers.values():
            if b.up and not b.paused:
                b.wake_parked_fetches()
                b.settle_acks()

    def close(self) -> None:
        for b in self.brokers.values():
            b.log.crash()

    def describe(self) -> str:
        parts = []
        ctl = self.controller
        if ctl.topic_id is not None:
            parts.append(f"metadata {ctl.state.partitions[ctl._key()]}")
        for b in self.brokers.values():
            r = b.replica
            state = "down" if not b.up else "paused" if b.paused else "up"
            role = r.role if r is not None else None
            parts.append(
                f"{b} {state} end={b.log.log_end_offset} hw={r.high_watermark if r else None} "
                f"role={role} pending={r.leader.pending if r and r.leader else None}"
            )
        parts.append(f"producer outstanding={len(self.producer.outstanding)}")
        return "; ".join(parts)


def run_seed(seed: int, bug: Bug | None = None, trace: bool = False) -> SimResult:
    """One complete run (faults, healing, final checks); deterministic in ``seed``. The
    brokers' logs live in a fresh temporary directory (in memory where /dev/shm exists),
    removed afterwards.
    """
    shm = Path("/dev/shm")
    parent = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="rillet-repl-sim-", dir=parent) as tmp:
        sim = Simulation(seed, Path(tmp), bug, trace)
        try:
            return trio.run(sim.run)
        finally:
            sim.close()
