"""The invariants of replication, checked after every event.

Why a module of its own: the checker is the specification the simulation is run against;
it must be readable apart from the machinery it watches. The first violation ends the run
(:class:`~.outcome.Violation`), so a failing seed names the event that broke a rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rillet.metadata_quorum.state import PartitionState

from .outcome import Violation
from .partition_log import Batch
from .topology import BROKERS

if TYPE_CHECKING:
    from .broker_process import BrokerProcess
    from .simulation import Simulation


class Checker:
    """The invariants, checked incrementally (after the event that could break them):

    1. at most one broker appends as leader in any leader epoch;
    2. a leader's high watermark never decreases within one leadership, and no replica's
       high watermark exceeds its log end;
    3. a committed batch (acknowledged to the producer, or below a high watermark a consumer
       was shown) is never contradicted by another committed batch, is held by every member
       of the committed ISR (those are the candidates of the next election), is never
       truncated by any replica, and is in the log of every replica that becomes leader;
    4. an acknowledgement on a topic whose flush policy forces fsyncs comes after the
       leader's fsync of the batch (its recovery point has passed it), and a restarted
       broker's recovery finds exactly the batches its crash left;
    5. after healing the logs are identical and hold every acknowledged batch exactly once,
       at the offset the producer was told (see :meth:`final`).
    """

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.committed: dict[int, Batch] = {}  # base offset -> batch (epoch may be -1)
        self.committed_payload: dict[int, int] = {}  # offset -> payload, for overlaps
        self.acks: dict[int, tuple[int, int]] = {}  # payload -> (base, count)
        self.writers: dict[int, int] = {}  # leader epoch -> the broker that appended in it
        self.leader_hw: dict[tuple[int, int, int], int] = {}
        self.isr: tuple[int, ...] = ()

    def fail(self, what: str) -> None:
        raise Violation(what)

    # -- 1 and 2 -----------------------------------------------------------------------------

    def leader_appended(self, broker: BrokerProcess, batch: Batch) -> None:
        writer = self.writers.setdefault(batch.epoch, broker.node_id)
        if writer != broker.node_id:
            self.fail(f"{broker} and b{writer} both accepted writes in leader epoch {batch.epoch}")

    def step(self) -> None:
        for b in self.sim.brokers.values():
            if not b.up:
                continue
            removed, appended = b.log.sync()
            if removed:
                self.sim.stats["batches truncated"] += len(removed)
                self.truncated(b, removed)
            if appended:
                self.appended(b, appended)
            r = b.replica
            if r is None:
                continue
            leo = r.log.log_end_offset
            if r.high_watermark > leo:
                self.fail(f"{b} high watermark {r.high_watermark} above its log end {leo}")
            leader = r.leader
            if leader is not None:
                if leader.high_watermark > leo:
                    self.fail(f"{b} leader high watermark {leader.high_watermark} > end {leo}")
                key = (b.node_id, b.incarnation, leader.leader_epoch)
                last = self.leader_hw.get(key, -1)
                if r.high_watermark < last:
                    self.fail(f"{b} high watermark went back from {last} to {r.high_watermark}")
                self.leader_hw[key] = r.high_watermark

    # -- 3 -------------------------------------------------------------------------------------

    def acked(self, payload: int, base: int, count: int) -> None:
        self.acks[payload] = (base, count)
        self.sim.stats["acks"] += 1
        self._commit(Batch(base, count, -1, payload), f"acked payload {payload}")

    def consumer_saw(self, broker: int, hw: int, visible: tuple[Batch, ...]) -> None:
        for b in visible:
            self._commit(b, f"shown to a consumer by b{broker} below hw {hw}")

    def _commit(self, b: Batch, why: str) -> None:
        known = self.committed.get(b.base)
        if known is not None and known.payload == b.payload and known.count == b.count:
            return
        for offset in range(b.base, b.end):
            other = self.committed_payload.get(offset)
            if other is not None and other != b.payload:
                self.fail(f"offset {offset}: payload {b.payload} ({why}) but {other} committed")
        for offset in range(b.base, b.end):
            self.committed_payload[offset] = b.payload
        self.committed[b.base] = b
        for member in self.isr:
            self._holds(self.sim.brokers[member], b, f"in the committed ISR {self.isr}; {why}")

    def _holds(self, broker: BrokerProcess, b: Batch, context: str) -> None:
        have = broker.log.by_base.get(b.base)
        if have is None or have.payload != b.payload or have.count != b.count:
            self.fail(
                f"{broker} lacks committed batch {b.payload}@{b.base}+{b.count} "
                f"(has {have}, log end {broker.log.log_end_offset}); {context}"
            )

    def partition_committed(self, before: PartitionState | None, after: PartitionState) -> None:
        self.sim.trace_line(f"metadata: {before} -> {after}")
        self.isr = after.isr
        added = set(after.isr) - set(before.isr if before is not None else ())
        for member in sorted(added):
            broker = self.sim.brokers[member]
            for b in self.committed.values():
                self._holds(broker, b, f"joined the committed ISR {after.isr}")

    def appended(self, broker: BrokerProcess, batches: list[Batch]) -> None:
        if broker.node_id not in self.isr:
            return
        for b in batches:
            known = self.committed.get(b.base)
            if known is not None and known.payload != b.payload:
                self.fail(f"ISR member {broker} appended {b} over committed {known}")

    def truncated(self, broker: BrokerProcess, removed: list[Batch]) -> None:
        """A committed batch cut by a member of the committed ISR is lost from a replica
        the next election may pick. A replica outside it may cut one (it followed a
        deposed leader whose log ends before a batch the next leader committed, seed 2949
        of the 10,000-seed sweep) and fetches it again: it rejoins only holding every
        committed batch (:meth:`partition_committed`)."""
        if broker.node_id not in self.isr:
            return
        for b in removed:
            known = self.committed.get(b.base)
            if known is not None and known.payload == b.payload:
                self.fail(f"{broker} truncated committed batch {b}")

    def leadership_started(self, broker: BrokerProcess) -> None:
        """An elected leader holds every committed batch. A broker that merely believes it
        leads (stale metadata after a pause) is not checked here: it can commit nothing, its
        followers are in a newer epoch; what it shows anyone goes through :meth:`_commit`."""
        r = broker.replica
        assert r is not None and r.role is not None
        self.sim.trace_line(
            f"{broker} leads epoch {r.role.leader_epoch} from {broker.log.log_end_offset}"
        )
        ctl = self.sim.controller
        p = ctl.state.partitions.get(ctl._key()) if ctl.topic_id is not None else None
        if p is None or p.leader != broker.node_id or p.leader_epoch != r.role.leader_epoch:
            self.sim.stats["stale leaderships"] += 1
            return
        self.sim.stats["leaderships"] += 1
        for b in self.committed.values():
            self._holds(broker, b, f"became leader in epoch {r.role.leader_epoch}")

    # -- 5 -------------------------------------------------------------------------------------

    def final(self) -> None:
        logs = {b.node_id: b.log.batches for b in self.sim.brokers.values()}
        first = logs[BROKERS[0]]
        for node, batches in logs.items():
            if batches != first:
                diff = next(
                    (i for i, (x, y) in enumerate(zip(batches, first, strict=False)) if x != y),
                    min(len(batches), len(first)),
                )
                self.fail(f"healed logs differ: b{node} vs b{BROKERS[0]} from batch #{diff}")
        where: dict[int, list[Batch]] = {}
        for b in first:
            where.setdefault(b.payload, []).append(b)
        for payload, (base, count) in sorted(self.acks.items()):
            found = where.get(payload, [])
            if len(found) != 1 or found[0].base != base or found[0].count != count:
                self.fail(f"acked payload {payload}@{base}+{count} appears as {found}")
        for b in self.committed.values():
            self._holds(self.sim.brokers[BROKERS[0]], b, "after healing")
        for broker in self.sim.brokers.values():
            self._epochs_match_log(broker)

    def _epochs_match_log(self, broker: BrokerProcess) -> None:
        """The leader-epoch cache says exactly where each epoch's batches start. One extra
        entry is allowed at the log end: an epoch this replica started as leader without
        writing (a follower forgets it at its next divergence answer)."""
        derived: list[tuple[int, int]] = []
        for b in broker.log.batches:
            if not derived or derived[-1][0] != b.epoch:
                derived.append((b.epoch, b.base))
        plog = broker.log.plog
        assert plog is not None
        cache = [(e.epoch, e.start_offset) for e in plog.epoch_history.cache.entries]
        r = broker.replica
        current = r.leader_epoch if r is not None else -1
        if (
            len(cache) == len(derived) + 1
            and cache[-1][1] == broker.log.log_end_offset
            and (not derived or derived[-1][0] < cache[-1][0] <= current)
        ):
            cache = cache[:-1]
        if cache != derived:
            self.fail(f"{broker} epoch cache {cache} does not match its log {derived}")
