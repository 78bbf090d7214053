"""A deterministic simulation of one partition replicated on three brokers (DESIGN §6).

Why it exists: the ISR / high watermark / leader-epoch rules go wrong only under particular
interleavings of crashes, pauses, lost, late, duplicated and reordered messages and stale
metadata, which a test on real processes meets by luck and can never replay. Here a run is a
pure function of its seed (every choice comes from ``random.Random(seed)`` or streams drawn
from it; one trio task runs the event loop, so trio's scheduling adds nothing), so a failing
seed is a reproducible bug report: ``.venv/bin/python tests/unit/broker/replication_sim.py
SEED`` replays it and prints a trace of the last events.

What is real and what is modelled:

- real: :class:`LeaderState` (follower progress, the high watermark over the maximal ISR, ISR
  proposals), :mod:`follower_state` (divergence truncation, out-of-range steps),
  :class:`LeaderEpochCache`, and the metadata side: the real :class:`Controller` deciding on a
  real :class:`MetadataState`, its records encoded into entries of a :class:`SimCluster`
  metadata log (SimQuorum) and decoded again by every broker.
- modelled, as small faithful copies of driver code (each names its source): the partition
  log (in memory: batches of base offset, record count, leader epoch, payload id), the
  driver half of ``PartitionReplica`` (roles, acks=all waiters, high-watermark checkpoint),
  the leader's answer to a follower fetch (``handlers/replica_fetch.py``, long poll from
  ``handlers/fetch.py``), the follower's use of it (``replication/replica_fetcher.py``), the
  ISR manager (``replication/isr_manager.py``), the broker lifecycle (register, catch up,
  heartbeat) and the acks=all produce path (``handlers/produce.py``).
- faults: process crash (the log survives: a process crash, not a power loss, so acks that
  rely on the page cache stay true) and restart, pause (SIGSTOP: nothing runs, messages
  queue), network cuts (both ways, or between a broker and the controller only), message
  loss, delay, duplication and reordering, stalled metadata, controller failover.

The checker (:class:`Checker`) runs after every event; the first violation ends the run.
"""

from __future__ import annotations

import bisect
import enum
import heapq
import random
import sys
import traceback
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import trio

from rillet.broker.replication.follower_state import (
    divergence_truncation_offset,
    plan_out_of_range,
)
from rillet.broker.replication.leader_state import IsrProposal, LeaderState
from rillet.metadata_quorum.controller import Controller, ControllerConfig
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.records import RegisterBroker, decode_entry, encode_entry
from rillet.metadata_quorum.state import MetadataState, PartitionState
from rillet.partition_store.leader_epoch_cache import LeaderEpochCache
from rillet.raft.sim_quorum import SimCluster
from rillet.wire.error_codes import ErrorCode

BROKERS = (1, 2, 3)
CONTROLLER = 0  # network address of "the active controller" (whichever voter leads)
PRODUCER = -1
CONSUMER = -2
VOTERS = [101, 102, 103]
TOPIC = "t"


class Bug(enum.Enum):
    """Deliberately broken variants: each must be caught by some seed, or the checker is
    not checking what it claims to."""

    # The leader counts a follower at the end of the records it sends, before the follower
    # has them (the follower's fetch offset is the only proof of what it holds).
    EARLY_FOLLOWER_LEO = "early-follower-leo"
    # The leader skips the divergence check: a follower keeps a diverging suffix and
    # appends the leader's records after it.
    NO_DIVERGENCE_CHECK = "no-divergence-check"


class Violation(Exception):
    """An invariant broke: the run stops here (the message says what, where and when)."""


# -- configuration ----------------------------------------------------------------------------


@dataclass(slots=True)
class SimConfig:
    """Timings (virtual ms) scaled down from the defaults so that a run of a few virtual
    seconds sees many leader changes; the ratios between them are what matters."""

    fault_ms: int = 6_000  # faults and new writes happen only before this
    heal_limit_ms: int = 15_000  # after healing, quiescence must come within this
    loss: float = 0.05
    duplication: float = 0.02
    delay_mean_ms: float = 3.0
    delay_spike: float = 0.02  # chance of a 20-200 ms delay (reordering, timeouts)
    nemesis_every_ms: tuple[int, int] = (120, 450)
    min_insync_replicas: int = 2
    session_timeout_ms: int = 400
    heartbeat_ms: int = 80
    lag_max_ms: int = 300
    disconnect_grace_ms: int = 100
    isr_check_ms: int = 50
    fetch_wait_ms: int = 60
    fetch_backoff_ms: int = 10
    request_timeout_ms: int = 200
    produce_timeout_ms: int = 250
    metadata_wait_ms: int = 150
    controller_tick_ms: int = 60
    checkpoint_ms: int = 150
    max_batches_per_fetch: int = 4
    producer_in_flight: int = 3
    producer_tick_ms: int = 15
    consumer_every_ms: int = 40

    @classmethod
    def for_seed(cls, rng: random.Random) -> SimConfig:
        """Vary the environment with the seed, so the sweep covers calm and rough runs."""
        return cls(
            loss=rng.choice([0.0, 0.02, 0.05, 0.1, 0.2]),
            duplication=rng.choice([0.0, 0.01, 0.05]),
            delay_mean_ms=rng.choice([1.0, 3.0, 8.0]),
            delay_spike=rng.choice([0.0, 0.02, 0.05]),
            min_insync_replicas=rng.choice([1, 2, 2]),
            nemesis_every_ms=rng.choice([(80, 300), (120, 450), (300, 900)]),
            session_timeout_ms=rng.choice([250, 400, 800]),
            lag_max_ms=rng.choice([150, 300, 600]),
            fetch_wait_ms=rng.choice([20, 60, 120]),
        )


# -- the partition log (in memory) -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Batch:
    base: int
    count: int
    epoch: int
    payload: int  # unique per produce attempt: identifies the batch across replicas

    @property
    def end(self) -> int:
        return self.base + self.count


class SimLog:
    """``PartitionLog`` reduced to what replication sees (partition_store/log.py): batches
    at contiguous offsets, the epoch of the last batch, and the leader-epoch cache fed the
    way the real log feeds it (``note_batch`` on appends, ``truncate_from_end`` on cuts)."""

    def __init__(self) -> None:
        self.batches: list[Batch] = []
        self.bases: list[int] = []
        self.by_base: dict[int, Batch] = {}
        self.epochs = LeaderEpochCache()

    @property
    def log_end_offset(self) -> int:
        return self.batches[-1].end if self.batches else 0

    @property
    def last_batch_epoch(self) -> int:
        return self.batches[-1].epoch if self.batches else -1

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        return self.epochs.end_offset_for(epoch, self.log_end_offset)

    def start_leader_epoch(self, epoch: int) -> None:
        """As ``PartitionLog.start_leader_epoch``: a new leader's epoch starts at its end."""
        if epoch > self.epochs.latest_epoch():
            self._note_batch(epoch, self.log_end_offset)

    def _note_batch(self, epoch: int, base: int) -> None:
        if epoch != self.epochs.latest_epoch():
            self.epochs.assign(epoch, base)

    def _push(self, batch: Batch) -> None:
        self.batches.append(batch)
        self.bases.append(batch.base)
        self.by_base[batch.base] = batch

    def append_as_leader(self, count: int, epoch: int, payload: int) -> Batch:
        if epoch < self.last_batch_epoch:  # place_leader_batches' epoch check
            raise Violation(f"leader append in epoch {epoch} after epoch {self.last_batch_epoch}")
        batch = Batch(self.log_end_offset, count, epoch, payload)
        self._push(batch)
        self._note_batch(epoch, batch.base)
        return batch

    def append_as_follower(self, batches: tuple[Batch, ...]) -> None:
        expected, epoch = self.log_end_offset, self.last_batch_epoch
        for b in batches:  # place_follower_batches' checks
            if b.base != expected or b.epoch < epoch:
                raise Violation(
                    f"follower append of {b} refused: log end {expected}, last epoch {epoch}"
                )
            expected, epoch = b.end, b.epoch
        for b in batches:
            self._push(b)
            self._note_batch(b.epoch, b.base)

    def read(self, offset: int, max_batches: int) -> tuple[Batch, ...]:
        i = bisect.bisect_left(self.bases, offset)
        return tuple(self.batches[i : i + max_batches])

    def truncate_to(self, offset: int) -> list[Batch]:
        """Cut at a batch boundary; returns the removed batches (PartitionLog.truncate_to)."""
        end = self.log_end_offset
        if offset == end:
            self.epochs.truncate_from_end(offset)
            return []
        if not 0 <= offset < end or offset not in self.by_base:
            raise Violation(f"truncation to {offset} is not at a batch boundary below {end}")
        i = bisect.bisect_left(self.bases, offset)
        removed = self.batches[i:]
        del self.batches[i:]
        del self.bases[i:]
        for b in removed:
            del self.by_base[b.base]
        self.epochs.truncate_from_end(self.log_end_offset)
        return removed

    def truncate_at_or_below(self, offset: int) -> tuple[int, list[Batch]]:
        """PartitionLog.truncate_at_or_below: cut at ``offset`` or the start of its batch."""
        offset = max(min(offset, self.log_end_offset), 0)
        if offset < self.log_end_offset:
            offset = self.bases[bisect.bisect_right(self.bases, offset) - 1]
        return offset, self.truncate_to(offset)


# -- messages --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FetchReq:
    follower: int
    req_id: int
    fetch_offset: int
    current_leader_epoch: int
    last_fetched_epoch: int


@dataclass(frozen=True, slots=True)
class FetchResp:
    req_id: int
    error: int
    high_watermark: int
    log_start_offset: int
    records: tuple[Batch, ...] = ()
    log_end_offset: int = -1
    diverging_epoch: int = -1
    diverging_end_offset: int = -1
    leader_epoch: int = -1


@dataclass(frozen=True, slots=True)
class ProduceReq:
    payload: int
    count: int


@dataclass(frozen=True, slots=True)
class ProduceResp:
    payload: int
    error: int
    base_offset: int = -1
    count: int = 0


@dataclass(frozen=True, slots=True)
class ControllerReq:
    """Register / heartbeat / AlterPartition / metadata fetch, all to the controller."""

    kind: str
    broker: int
    req_id: int
    broker_epoch: int = -1
    caught_up: bool = False
    incarnation: str = ""
    leader_epoch: int = -1
    partition_epoch: int = -1
    isr: tuple[int, ...] = ()
    after_index: int = 0


@dataclass(frozen=True, slots=True)
class ControllerResp:
    kind: str
    req_id: int
    error: int
    broker_epoch: int = -1
    fenced: bool = True
    isr: tuple[int, ...] = ()
    partition_epoch: int = -1
    entries: tuple[tuple[int, bytes], ...] = ()


@dataclass(frozen=True, slots=True)
class Role:
    """``ReplicaRole``: the committed state of the partition as this broker knows it."""

    is_leader: bool
    leader_epoch: int
    isr: tuple[int, ...]
    replicas: tuple[int, ...]
    partition_epoch: int
    leader_id: int


@dataclass(eq=False, slots=True)
class AcksWaiter:
    target: int
    batch: Batch
    resolved: bool = False


@dataclass(slots=True)
class AlterCall:
    """One IsrManager._propose in flight (ControllerLink.call with its deadline)."""

    proposal: IsrProposal
    req: ControllerReq
    deadline: int
    backoff: int = 20
    done: bool = False


@dataclass(frozen=True, slots=True)
class SentFetch:
    """replica_fetcher._Sent: the answer applies only if this still holds."""

    fetch_offset: int
    leader_epoch: int


# -- the replica: PartitionReplica's driver half ----------------------------------------------


class ReplicaModel:
    """Mirrors broker/partition_replica.py with page-cache acks (local end = log end)."""

    def __init__(self, broker: SimBroker, log: SimLog, checkpoint: int) -> None:
        self.broker = broker
        self.log = log
        self.role: Role | None = None
        self.leader: LeaderState | None = None
        self.leader_epoch = 0
        self.high_watermark = min(checkpoint, log.log_end_offset)
        self.waiters: list[AcksWaiter] = []

    @property
    def is_leader(self) -> bool:
        return self.leader is not None

    def set_role(self, role: Role, now: int) -> None:
        previous = self.role
        self.role = role
        self.leader_epoch = role.leader_epoch
        if not role.is_leader:
            if self.leader is not None:
                self.leader = None
                self._release_waiters()
                self.broker.wake_parked_fetches()
            return
        if (
            self.leader is None
            or previous is None
            or previous.leader_epoch != role.leader_epoch
            or not previous.is_leader
        ):
            self.leader = LeaderState(
                node_id=self.broker.node_id,
                replicas=role.replicas or (self.broker.node_id,),
                isr=role.isr,
                leader_epoch=role.leader_epoch,
                partition_epoch=role.partition_epoch,
                high_watermark=self.high_watermark,
                epoch_start_offset=self.log.log_end_offset,
                now_ms=now,
            )
            self.log.start_leader_epoch(role.leader_epoch)
            self.broker.sim.checker.leadership_started(self.broker)
        else:
            self.leader.on_committed(role.isr, role.partition_epoch)
        self._leader_end_moved()

    def in_sync_count(self) -> int:
        return len(self.leader.isr) if self.leader is not None else 0

    def append_as_leader(self, count: int, payload: int) -> Batch:
        batch = self.log.append_as_leader(count, self.leader_epoch, payload)
        self.broker.wake_parked_fetches()
        self._leader_end_moved()
        return batch

    def on_follower_fetch(self, replica_id: int, fetch_offset: int, now: int) -> None:
        if self.leader is not None and self.leader.on_follower_fetch(
            replica_id, fetch_offset, self.log.log_end_offset, now
        ):
            self._high_watermark_moved(self.leader.high_watermark)

    def _leader_end_moved(self) -> None:
        if self.leader is not None:
            self.leader.update_high_watermark(self.log.log_end_offset)
            self._high_watermark_moved(self.leader.high_watermark)

    def follow_high_watermark(self, leader_high_watermark: int) -> None:
        self._high_watermark_moved(min(leader_high_watermark, self.log.log_end_offset))

    def after_truncation(self) -> None:
        self.high_watermark = min(self.high_watermark, self.log.log_end_offset)

    def _high_watermark_moved(self, offset: int) -> None:
        if offset <= self.high_watermark:
            return
        self.high_watermark = offset
        if self.waiters and self.is_leader:
            still = []
            for waiter in self.waiters:
                if offset >= waiter.target:
                    self.broker.acks_resolved(waiter, reached=True)
                else:
                    still.append(waiter)
            self.waiters = still

    def _release_waiters(self) -> None:
        waiters, self.waiters = self.waiters, []
        for waiter in waiters:
            self.broker.acks_resolved(waiter, reached=False)


# -- a broker ----------------------------------------------------------------------------------


@dataclass(slots=True)
class ParkedFetch:
    req: FetchReq
    deadline: int


class SimBroker:
    """One broker process: its log and high-watermark checkpoint survive a crash, the rest
    (metadata, roles, leader state, requests in flight) is rebuilt by the restart."""

    def __init__(self, sim: Simulation, node_id: int) -> None:
        self.sim = sim
        self.node_id = node_id
        self.log = SimLog()
        self.checkpointed_hw = 0
        self.incarnation = 0
        self.up = False
        self.paused = False
        self.deferred: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []
        self.metadata_stalled_until = 0
        self._reset()

    def _reset(self) -> None:
        self.broker_epoch: int | None = None
        self.registering: int | None = None
        self.caught_up = False
        self.metadata = MetadataState()
        self.replica: ReplicaModel | None = None
        self.fetch_in_flight: tuple[int, int] | None = None  # (request id, leader)
        self.sent: dict[int, SentFetch] = {}
        self.parked: list[ParkedFetch] = []
        self.md_in_flight: int | None = None
        self.hb_in_flight: int | None = None
        self.alter: AlterCall | None = None

    def __repr__(self) -> str:
        return f"b{self.node_id}"

    # -- process lifecycle ---------------------------------------------------------------------

    def start(self) -> None:
        self.up, self.paused = True, False
        self.incarnation += 1
        self.deferred.clear()
        self._reset()
        sim = self.sim
        self.register()
        self.poll_metadata()
        sim.later(self, sim.config.isr_check_ms, self.isr_check)
        sim.later(self, sim.config.checkpoint_ms, self.checkpoint)

    def crash(self) -> None:
        """SIGKILL: everything but the log and the checkpoint is gone."""
        self.up = False
        self.paused = False
        self.incarnation += 1
        self.deferred.clear()
        self._reset()

    def checkpoint(self) -> None:
        if self.replica is not None:
            self.checkpointed_hw = self.replica.high_watermark
        self.sim.later(self, self.sim.config.checkpoint_ms, self.checkpoint)

    # -- metadata and lifecycle (broker_lifecycle.py, metadata follower, reconciler) ----------

    def register(self) -> None:
        req_id = self.sim.next_id()
        self.registering = req_id
        req = ControllerReq(
            "register", self.node_id, req_id, incarnation=f"{self.node_id}.{self.incarnation}"
        )
        self.sim.send(self.node_id, CONTROLLER, self.sim.controller.on_request, req)
        self.sim.later(self, self.sim.config.request_timeout_ms, self._register_timeout, req_id)

    def _register_timeout(self, req_id: int) -> None:
        if self.registering == req_id:
            self.register()

    def poll_metadata(self) -> None:
        req_id = self.sim.next_id()
        self.md_in_flight = req_id
        req = ControllerReq(
            "metadata", self.node_id, req_id, after_index=self.metadata.last_applied_index
        )
        self.sim.send(self.node_id, CONTROLLER, self.sim.controller.on_request, req)
        timeout = self.sim.config.metadata_wait_ms + self.sim.config.request_timeout_ms
        self.sim.later(self, timeout, self._metadata_timeout, req_id)

    def _metadata_timeout(self, req_id: int) -> None:
        if self.md_in_flight == req_id:
            self.poll_metadata()

    def heartbeat(self) -> None:
        if self.broker_epoch is None or self.hb_in_flight is not None:
            return
        req_id = self.sim.next_id()
        self.hb_in_flight = req_id
        req = ControllerReq(
            "heartbeat",
            self.node_id,
            req_id,
            broker_epoch=self.broker_epoch,
            caught_up=self.caught_up,
        )
        self.sim.send(self.node_id, CONTROLLER, self.sim.controller.on_request, req)
        self.sim.later(self, self.sim.config.request_timeout_ms, self._heartbeat_timeout, req_id)

    def _heartbeat_timeout(self, req_id: int) -> None:
        if self.hb_in_flight == req_id:
            self.hb_in_flight = None
            self.heartbeat()

    def on_controller_response(self, resp: ControllerResp) -> None:
        sim = self.sim
        if resp.kind == "register" and resp.req_id == self.registering:
            if resp.error != ErrorCode.NONE:
                return  # the timeout registers again
            self.registering = None
            self.broker_epoch = resp.broker_epoch
            self.hb_in_flight = None
            self._maybe_caught_up()
            self.heartbeat()
        elif resp.kind == "heartbeat" and resp.req_id == self.hb_in_flight:
            self.hb_in_flight = None
            if resp.error == ErrorCode.UNKNOWN_MEMBER_ID:
                self.broker_epoch = None
                self.register()
                return
            sim.later(self, sim.config.heartbeat_ms, self.heartbeat)
        elif resp.kind == "metadata" and resp.req_id == self.md_in_flight:
            self.md_in_flight = None
            for index, data in resp.entries:
                if index == self.metadata.last_applied_index + 1:
                    self.metadata.apply_entry(index, decode_entry(data))
            self._maybe_caught_up()
            if self.caught_up:
                self.reconcile()
            self.poll_metadata()
        elif (
            resp.kind == "alter" and self.alter is not None and resp.req_id == self.alter.req.req_id
        ):
            self._alter_answered(resp)

    def _maybe_caught_up(self) -> None:
        """broker_lifecycle: caught up once the metadata holds this broker's registration."""
        if (
            not self.caught_up
            and self.broker_epoch is not None
            and self.metadata.last_applied_index >= self.broker_epoch
        ):
            self.caught_up = True
            self.reconcile()

    def partition(self) -> PartitionState | None:
        for p in self.metadata.partitions.values():
            return p
        return None

    def reconcile(self) -> None:
        """PartitionReconciler.reconcile for the one partition."""
        p = self.partition()
        if p is None or self.node_id not in p.replicas:
            return
        if self.replica is None:
            self.replica = ReplicaModel(self, self.log, self.checkpointed_hw)
        role = Role(
            is_leader=p.leader == self.node_id,
            leader_epoch=p.leader_epoch,
            isr=p.isr,
            replicas=p.replicas,
            partition_epoch=p.partition_epoch,
            leader_id=p.leader,
        )
        self.replica.set_role(role, self.sim.now)
        self.maybe_fetch()

    # -- follower: replica_fetcher.py ----------------------------------------------------------

    def maybe_fetch(self) -> None:
        r = self.replica
        if r is None or r.role is None or r.role.is_leader or r.role.leader_id < 0:
            self.fetch_in_flight = None
            return
        leader = r.role.leader_id
        if self.fetch_in_flight is not None:
            if self.fetch_in_flight[1] == leader:
                return
            self.fetch_in_flight = None  # a loop for the new leader; the old answer is stale
        req_id = self.sim.next_id()
        self.fetch_in_flight = (req_id, leader)
        self.sent[req_id] = SentFetch(self.log.log_end_offset, r.leader_epoch)
        req = FetchReq(
            self.node_id,
            req_id,
            self.log.log_end_offset,
            r.leader_epoch,
            self.log.epochs.latest_epoch(),
        )
        target = self.sim.brokers[leader]
        self.sim.send(self.node_id, leader, target.on_fetch, req)
        timeout = self.sim.config.request_timeout_ms + self.sim.config.fetch_wait_ms
        self.sim.later(self, timeout, self._fetch_timeout, req_id)

    def _fetch_timeout(self, req_id: int) -> None:
        if self.fetch_in_flight is not None and self.fetch_in_flight[0] == req_id:
            self.fetch_in_flight = None  # a broken connection: back off, then fetch again
            self.sim.later(self, self.sim.config.fetch_backoff_ms, self.maybe_fetch)

    def on_fetch_response(self, resp: FetchResp) -> None:
        s = self.sent.get(resp.req_id)
        if s is None:
            return
        progressed = self._apply(s, resp)
        if self.fetch_in_flight is None or self.fetch_in_flight[0] != resp.req_id:
            return  # a duplicate, or the answer to a request already given up on
        self.fetch_in_flight = None
        self.sent.pop(resp.req_id, None)
        if progressed:
            self.maybe_fetch()
        else:
            self.sim.later(self, self.sim.config.fetch_backoff_ms, self.maybe_fetch)

    def _apply(self, s: SentFetch, answer: FetchResp) -> bool:
        """ReplicaFetcherManager._apply, line for line."""
        replica, plog = self.replica, self.log
        role = replica.role if replica is not None else None
        if (
            replica is None
            or role is None
            or role.is_leader
            or replica.leader_epoch != s.leader_epoch
            or plog.log_end_offset != s.fetch_offset
        ):
            self.sim.stats["stale fetch answers dropped"] += 1
            return True  # the partition changed meanwhile: this answer is stale
        diverging = answer.diverging_epoch >= 0 or answer.diverging_end_offset >= 0
        if answer.error == ErrorCode.NONE and not diverging:
            if answer.records:
                plog.append_as_follower(answer.records)
                self.sim.checker.follower_appended(self, answer.records)
            replica.follow_high_watermark(answer.high_watermark)
        elif answer.error == ErrorCode.NONE:
            target = divergence_truncation_offset(
                answer.diverging_epoch,
                answer.diverging_end_offset,
                plog.end_offset_for_epoch,
                plog.log_end_offset,
            )
            cut, removed = plog.truncate_at_or_below(target)
            self.sim.checker.truncated(self, cut, removed)
            replica.after_truncation()
            self.sim.stats["divergence answers"] += 1
            self.sim.stats["batches truncated"] += len(removed)
            self.sim.trace_line(
                f"{self} diverged at {answer.diverging_epoch}/"
                f"{answer.diverging_end_offset}: truncated to {cut}"
            )
        else:
            step = plan_out_of_range(
                answer.error,
                plog.log_end_offset,
                answer.log_start_offset,
                answer.log_end_offset,
            )
            self.sim.stats[f"follower got {ErrorCode(answer.error).name}"] += 1
            if step.truncate_to is not None:
                cut, removed = plog.truncate_at_or_below(step.truncate_to)
                self.sim.checker.truncated(self, cut, removed)
            elif step.restart_at is not None:
                raise Violation(f"{self}: restart at {step.restart_at} (no retention here)")
            else:
                return False
            replica.after_truncation()
        return True

    # -- leader: handlers/replica_fetch.py and the long poll of handlers/fetch.py --------------

    def on_fetch(self, req: FetchReq) -> None:
        deadline = self.sim.now + self.sim.config.fetch_wait_ms
        self._serve_fetch(ParkedFetch(req, deadline))

    def _serve_fetch(self, parked: ParkedFetch) -> None:
        resp = self.read_for_follower(parked.req)
        done = resp.records or resp.error != ErrorCode.NONE or resp.diverging_end_offset >= 0
        if done or self.sim.now >= parked.deadline or resp.diverging_epoch >= 0:
            follower = self.sim.brokers[parked.req.follower]
            self.sim.send(self.node_id, follower.node_id, follower.on_fetch_response, resp)
            return
        self.parked.append(parked)
        self.sim.later(self, parked.deadline - self.sim.now, self._fetch_deadline, parked)

    def _fetch_deadline(self, parked: ParkedFetch) -> None:
        if parked in self.parked:
            self.parked.remove(parked)
            self._serve_fetch(parked)

    def wake_parked_fetches(self) -> None:
        parked, self.parked = self.parked, []
        for p in parked:
            self._serve_fetch(p)

    def read_for_follower(self, p: FetchReq) -> FetchResp:
        """A faithful copy of ``read_for_follower`` in broker/handlers/replica_fetch.py
        (which needs a BrokerContext and file regions), steps 2-4, with its ``_answer``."""
        replica = self.replica
        if replica is None or not replica.is_leader:
            return FetchResp(p.req_id, ErrorCode.NOT_LEADER_OR_FOLLOWER, -1, -1)
        epoch_error = _epoch_error(replica, p.current_leader_epoch)
        if epoch_error is not None:
            self.sim.stats[f"fetch answer {epoch_error.name}"] += 1
            return self._answer(p, epoch_error)
        plog = replica.log
        bug = self.sim.bug
        if p.last_fetched_epoch >= 0 and bug is not Bug.NO_DIVERGENCE_CHECK:
            epoch, end_offset = plog.end_offset_for_epoch(p.last_fetched_epoch)
            if epoch < p.last_fetched_epoch or end_offset < p.fetch_offset:
                return self._answer(p, ErrorCode.NONE, diverging=(epoch, end_offset))
        if not 0 <= p.fetch_offset <= plog.log_end_offset:
            return self._answer(p, ErrorCode.OFFSET_OUT_OF_RANGE)
        replica.on_follower_fetch(p.follower, p.fetch_offset, self.sim.now)
        records = plog.read(p.fetch_offset, self.sim.config.max_batches_per_fetch)
        if bug is Bug.EARLY_FOLLOWER_LEO and records:
            replica.on_follower_fetch(p.follower, records[-1].end, self.sim.now)
        return self._answer(p, ErrorCode.NONE, records=records)

    def _answer(
        self,
        p: FetchReq,
        code: ErrorCode,
        records: tuple[Batch, ...] = (),
        diverging: tuple[int, int] | None = None,
    ) -> FetchResp:
        replica = self.replica
        assert replica is not None
        epoch, end_offset = diverging if diverging is not None else (-1, -1)
        if diverging is not None and epoch < 0 and end_offset < 0:
            end_offset = replica.high_watermark  # no common epoch: fall back to the committed
        return FetchResp(
            p.req_id,
            code,
            replica.high_watermark,
            0,
            records,
            log_end_offset=replica.log.log_end_offset,
            diverging_epoch=epoch,
            diverging_end_offset=end_offset,
            leader_epoch=replica.leader_epoch,
        )

    # -- leader: ISR changes (isr_manager.py through ControllerLink.call) ----------------------

    def isr_check(self) -> None:
        sim = self.sim
        sim.later(self, sim.config.isr_check_ms, self.isr_check)
        r = self.replica
        if self.broker_epoch is None or r is None or r.leader is None:
            return
        proposal = r.leader.isr_change(r.log.log_end_offset, sim.now, sim.config.lag_max_ms)
        if proposal is None:
            return
        req = ControllerReq(
            "alter",
            self.node_id,
            sim.next_id(),
            broker_epoch=self.broker_epoch,
            leader_epoch=r.leader.leader_epoch,
            partition_epoch=proposal.partition_epoch,
            isr=proposal.isr,
        )
        self.alter = AlterCall(proposal, req, sim.now + sim.config.request_timeout_ms)
        sim.stats[
            "ISR shrinks proposed"
            if len(proposal.isr) < len(r.leader.isr)
            else "ISR expansions proposed"
        ] += 1
        sim.trace_line(f"{self} proposes ISR {proposal.isr} at pe {proposal.partition_epoch}")
        self._send_alter(self.alter)
        sim.later(self, sim.config.request_timeout_ms, self._alter_deadline, self.alter)

    def _send_alter(self, call: AlterCall) -> None:
        if not call.done:
            self.sim.send(self.node_id, CONTROLLER, self.sim.controller.on_request, call.req)

    def _alter_deadline(self, call: AlterCall) -> None:
        if not call.done:
            self._alter_finished(call, None)  # ControllerUnreachable

    def _alter_answered(self, resp: ControllerResp) -> None:
        call = self.alter
        if call is None or call.done:
            return
        if resp.error == ErrorCode.NOT_CONTROLLER:  # the link tries again until its deadline
            if self.sim.now + call.backoff < call.deadline:
                self.sim.later(self, call.backoff, self._send_alter, call)
                call.backoff = min(call.backoff * 2, 500)
            return
        self._alter_finished(call, resp)

    def _alter_finished(self, call: AlterCall, resp: ControllerResp | None) -> None:
        """The tail of IsrManager._propose: a failure is ``proposal_failed`` only when the
        controller refused the proposal against the partition epoch it was based on; no
        answer, or a refusal naming a newer partition epoch (the answer a retry of an already
        committed proposal gets), is ``proposal_outcome_unknown``: the controller may have
        committed it. ``driver_fix=False`` replays the old behaviour (every failure
        ``proposal_failed``), which lost acknowledged records (the regression test)."""
        call.done = True
        if self.alter is call:
            self.alter = None
        current = self.replica.leader if self.replica is not None else None
        if current is None or current.pending is not call.proposal:
            return
        if resp is None or resp.error != ErrorCode.NONE:
            self.sim.trace_line(f"{self} ISR proposal {call.proposal.isr} failed: {resp}")
            self.sim.stats[
                "ISR proposals unanswered" if resp is None else "ISR proposals refused"
            ] += 1
            refused_as_proposed = resp is not None and (
                resp.partition_epoch == call.proposal.partition_epoch
            )
            if self.sim.driver_fix and not refused_as_proposed:
                current.proposal_outcome_unknown()
            else:
                current.proposal_failed()
        elif resp.partition_epoch <= current.partition_epoch:
            current.proposal_failed()

    # -- acks=all produce (handlers/produce.py) ------------------------------------------------

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


def _epoch_error(replica: ReplicaModel, follower_epoch: int) -> ErrorCode | None:
    """replica_fetch._epoch_error."""
    if follower_epoch < 0:
        return None
    if follower_epoch < replica.leader_epoch:
        return ErrorCode.FENCED_LEADER_EPOCH
    if follower_epoch > replica.leader_epoch:
        return ErrorCode.UNKNOWN_LEADER_EPOCH
    return None


# -- the controller on the metadata quorum -----------------------------------------------------


class SimController:
    """The active controller: the real Controller deciding on the real MetadataState, its
    records committed through a SimCluster (SimQuorum) and applied back from the log, one
    decision at a time like ControllerService.submit."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        cfg = sim.config
        self.config = ControllerConfig(
            broker_session_timeout_ms=cfg.session_timeout_ms,
            auto_leader_rebalance=True,
            leader_rebalance_interval_ms=1_000,
            connection_lost_grace_ms=cfg.disconnect_grace_ms,
            new_controller_grace_ms=cfg.session_timeout_ms,
        )
        # The Controller (topic ids, assignment) and SimCluster draw from their own streams,
        # both derived from the run's seed, so their draws do not shift the network's.
        self.rng = random.Random(sim.rng.getrandbits(64))
        self.cluster = SimCluster(VOTERS, random.Random(sim.rng.getrandbits(64)))
        self.state = MetadataState()
        self.ctl: Controller | None = None
        self.parked: list[ControllerReq] = []  # metadata fetches long-polling for entries
        self.topic_id: str | None = None

    def become_active(self) -> None:
        ctl = Controller(self.config, self.rng)
        ctl.on_become_leader(self.state, self.sim.now)
        self.ctl = ctl

    def failover(self, gap_ms: int) -> None:
        """The controller's voter loses leadership; another one takes over after a gap."""
        old = self.cluster.leader_id
        self.cluster.elect(None)
        self.ctl = None
        choice = self.sim.rng.choice([v for v in VOTERS if v != old])
        self.sim.at(self.sim.now + gap_ms, self._elected, choice)

    def _elected(self, voter: int) -> None:
        if self.cluster.leader_id is None:
            self.cluster.elect(voter)
            self.become_active()

    async def decide(self, fn: Callable[[Controller, MetadataState, int], Decision]) -> Decision:
        assert self.ctl is not None
        decision = fn(self.ctl, self.state, self.sim.now)
        if decision.records:
            leader = self.cluster.leader_id
            assert leader is not None
            member = self.cluster.member(leader)
            await member.propose(encode_entry(decision.records))
            before = self.state.partitions.get(self._key()) if self.topic_id else None
            for entry in await member.read_committed(self.state.last_applied_index):
                self.state.apply_entry(entry.index, decode_entry(entry.data))
            self._committed(before)
        return decision

    def _key(self) -> tuple[str, int]:
        assert self.topic_id is not None
        return self.topic_id, 0

    def _committed(self, before: PartitionState | None) -> None:
        if self.topic_id is None:
            topic = self.state.topic_by_name(TOPIC)
            self.topic_id = topic.topic_id if topic is not None else None
        if self.topic_id is not None:
            after = self.state.partitions.get(self._key())
            if after is not None and before != after:
                self.sim.checker.partition_committed(before, after)
        parked, self.parked = self.parked, []
        for req in parked:
            self._answer_metadata(req)

    async def tick(self) -> None:
        self.sim.at(self.sim.now + self.sim.config.controller_tick_ms, self.tick)
        if self.ctl is None:
            return
        await self.decide(lambda ctl, state, now: ctl.tick(state, now))
        if self.topic_id is None and len(self.state.unfenced_brokers()) == len(BROKERS):
            await self.decide(lambda ctl, state, now: ctl.create_topic(state, TOPIC, 1, 3, {}))

    def connection_lost(self, broker_id: int) -> None:
        b = self.state.brokers.get(broker_id)
        if self.ctl is not None and b is not None:
            self.ctl.connection_lost(self.state, broker_id, b.broker_epoch, self.sim.now)

    async def on_request(self, req: ControllerReq) -> None:
        """The handlers of broker/handlers/cluster.py, as the active controller runs them."""
        if req.kind == "metadata":  # any voter serves the committed log
            if self.cluster.commit_index > req.after_index:
                self._answer_metadata(req)
            else:
                self.parked.append(req)
                self.sim.at(
                    self.sim.now + self.sim.config.metadata_wait_ms, self._metadata_expired, req
                )
            return
        if self.ctl is None:
            self._respond(req, ControllerResp(req.kind, req.req_id, ErrorCode.NOT_CONTROLLER))
            return
        if req.kind == "register":
            record = RegisterBroker(req.broker, req.incarnation, "sim", req.broker)
            d = await self.decide(lambda ctl, state, now: ctl.register_broker(state, record, now))
            epoch = self.state.brokers[req.broker].broker_epoch if not d.error else -1
            self._respond(req, ControllerResp(req.kind, req.req_id, d.error, broker_epoch=epoch))
        elif req.kind == "heartbeat":
            d = await self.decide(
                lambda ctl, state, now: ctl.heartbeat(
                    state, req.broker, req.broker_epoch, req.caught_up, now
                )
            )
            b = self.state.brokers.get(req.broker)
            fenced = b is None or b.fenced
            self._respond(req, ControllerResp(req.kind, req.req_id, d.error, fenced=fenced))
        elif req.kind == "alter":
            d = await self.decide(lambda ctl, state, now: self._alter(ctl, state, req))
            p = self.state.partitions[self._key()]
            resp = ControllerResp(
                req.kind, req.req_id, d.error, isr=p.isr, partition_epoch=p.partition_epoch
            )
            self._respond(req, resp)

    def _alter(self, ctl: Controller, state: MetadataState, req: ControllerReq) -> Decision:
        broker = state.brokers.get(req.broker)
        if broker is None or broker.broker_epoch != req.broker_epoch:
            return Decision([], ErrorCode.UNKNOWN_MEMBER_ID, "stale or unknown broker epoch")
        assert self.topic_id is not None
        return ctl.alter_partition(
            state,
            self.topic_id,
            0,
            req.broker,
            req.leader_epoch,
            req.partition_epoch,
            list(req.isr),
        )

    def _metadata_expired(self, req: ControllerReq) -> None:
        if any(parked is req for parked in self.parked):
            self.parked = [parked for parked in self.parked if parked is not req]
            self._answer_metadata(req)

    def _answer_metadata(self, req: ControllerReq) -> None:
        """handlers/cluster._metadata_fetch: the committed entries after the broker's index
        (the slice SimQuorum.read_committed returns, read without awaiting)."""
        entries = tuple((e.index, e.data) for e in self.cluster.log[req.after_index :])
        broker = self.sim.brokers[req.broker]
        if broker.metadata_stalled_until > self.sim.now:
            return  # this broker's metadata is late: it goes on believing what it knew
        self._respond(req, ControllerResp("metadata", req.req_id, ErrorCode.NONE, entries=entries))

    def _respond(self, req: ControllerReq, resp: ControllerResp) -> None:
        broker = self.sim.brokers[req.broker]
        self.sim.send(CONTROLLER, req.broker, broker.on_controller_response, resp)


# -- clients ----------------------------------------------------------------------------------


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


# -- the checker -------------------------------------------------------------------------------


class Checker:
    """The invariants, checked incrementally (after the event that could break them):

    1. at most one broker appends as leader in any leader epoch;
    2. a leader's high watermark never decreases within one leadership, and no replica's
       high watermark exceeds its log end;
    3. a committed batch (acknowledged to the producer, or below a high watermark a consumer
       was shown) is never contradicted by another committed batch, is held by every member
       of the committed ISR (those are the candidates of the next election), is never
       truncated by any replica, and is in the log of every replica that becomes leader;
    4. after healing the logs are identical and hold every acknowledged batch exactly once,
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

    def leader_appended(self, broker: SimBroker, batch: Batch) -> None:
        writer = self.writers.setdefault(batch.epoch, broker.node_id)
        if writer != broker.node_id:
            self.fail(f"{broker} and b{writer} both accepted writes in leader epoch {batch.epoch}")

    def step(self) -> None:
        for b in self.sim.brokers.values():
            r = b.replica
            if not b.up or r is None:
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

    def _holds(self, broker: SimBroker, b: Batch, context: str) -> None:
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

    def follower_appended(self, broker: SimBroker, batches: tuple[Batch, ...]) -> None:
        if broker.node_id not in self.isr:
            return
        for b in batches:
            known = self.committed.get(b.base)
            if known is not None and known.payload != b.payload:
                self.fail(f"ISR member {broker} appended {b} over committed {known}")

    def truncated(self, broker: SimBroker, cut: int, removed: list[Batch]) -> None:
        for b in removed:
            known = self.committed.get(b.base)
            if known is not None and known.payload == b.payload:
                self.fail(f"{broker} truncated committed batch {b} (cut at {cut})")

    def leadership_started(self, broker: SimBroker) -> None:
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

    # -- 4 -------------------------------------------------------------------------------------

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

    def _epochs_match_log(self, broker: SimBroker) -> None:
        """The leader-epoch cache says exactly where each epoch's batches start. One extra
        entry is allowed at the log end: an epoch this replica started as leader without
        writing (a follower forgets it at its next divergence answer)."""
        derived: list[tuple[int, int]] = []
        for b in broker.log.batches:
            if not derived or derived[-1][0] != b.epoch:
                derived.append((b.epoch, b.base))
        cache = [(e.epoch, e.start_offset) for e in broker.log.epochs.entries]
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


# -- the simulation ----------------------------------------------------------------------------


@dataclass(slots=True)
class SimResult:
    seed: int
    violation: str | None
    events: int
    end_ms: int
    acked: int
    leader_epochs: int
    stats: Counter[str] = field(default_factory=Counter)
    trace: list[str] = field(default_factory=list)


class Simulation:
    def __init__(
        self, seed: int, bug: Bug | None = None, trace: bool = False, driver_fix: bool = True
    ) -> None:
        self.seed = seed
        self.driver_fix = driver_fix
        self.rng = random.Random(seed)
        self.config = SimConfig.for_seed(self.rng)
        self.bug = bug
        self.now = 0
        self._seq = 0
        self._ids = 0
        self._queue: list[tuple[int, int, Callable[..., Any], tuple[Any, ...]]] = []
        self.trace: deque[str] | None = deque(maxlen=400) if trace else None
        self.brokers = {n: SimBroker(self, n) for n in BROKERS}
        self.controller = SimController(self)
        self.producer = Producer(self)
        self.checker = Checker(self)
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

    def later(self, broker: SimBroker, delay: int, fn: Callable[..., Any], *args: Any) -> None:
        """A timer of ``broker``'s current process: dropped if it crashes meanwhile, held
        while it is paused."""
        self.at(self.now + delay, self._on_broker, broker, broker.incarnation, fn, args)

    def _on_broker(
        self, broker: SimBroker, incarnation: int, fn: Callable[..., Any], args: tuple[Any, ...]
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
        is modelled as a new attempt with its own payload id.
        """
        if (src, dst) in self.cut or self.rng.random() < self.loss:
            return
        duplicate = self.rng.random() < self.duplication and not isinstance(msg, ProduceReq)
        copies = 2 if duplicate else 1
        for _ in range(copies):
            delay = 1 + int(self.rng.expovariate(1 / self.config.delay_mean_ms))
            if self.rng.random() < self.config.delay_spike:
                delay += self.rng.randint(20, 200)
            if dst in self.brokers:
                broker = self.brokers[dst]
                self.at(
                    self.now + delay, self._on_broker, broker, broker.incarnation, handler, (msg,)
                )
            else:
                self.at(self.now + delay, handler, msg)

    # -- faults ----------------------------------------------------------------------------------

    def _leader_now(self) -> int | None:
        for b in self.brokers.values():
            if b.up and b.replica is not None and b.replica.is_leader:
                return b.node_id
        return None

    def _target(self) -> SimBroker:
        leader = self._leader_now()
        if leader is not None and self.rng.random() < 0.6:
            return self.brokers[leader]
        return self.brokers[self.rng.choice(BROKERS)]

    def nemesis(self) -> None:
        if self.now >= self.config.fault_ms:
            return
        lo, hi = self.config.nemesis_every_ms
        self.at(self.now + self.rng.randint(lo, hi), self.nemesis)
        b = self._target()
        action = self.rng.choices(
            [
                "crash",
                "pause",
                "isolate",
                "cut_controller",
                "stall_metadata",
                "failover",
                "loss_burst",
            ],
            weights=[4, 3, 2, 2, 2, 1, 1],
        )[0]
        duration = self.rng.randint(50, 900)
        self.trace_line(f"nemesis: {action} {b} for {duration}ms")
        self.stats[f"nemesis {action}"] += 1
        if action == "crash" and b.up:
            self.crash(b)
            self.at(self.now + duration, self.restart, b)
        elif action == "pause" and b.up and not b.paused:
            b.paused = True
            self.at(self.now + duration, self.resume, b)
        elif action == "isolate":
            links = {(b.node_id, o) for o in (*BROKERS, CONTROLLER, PRODUCER, CONSUMER)}
            links |= {(o, d) for d, o in links}
            self._cut_for(links, duration)
        elif action == "cut_controller":
            self._cut_for({(b.node_id, CONTROLLER), (CONTROLLER, b.node_id)}, duration)
        elif action == "stall_metadata":
            b.metadata_stalled_until = max(b.metadata_stalled_until, self.now + duration)
        elif action == "failover" and self.controller.ctl is not None:
            self.controller.failover(self.rng.randint(10, 200))
        elif action == "loss_burst":
            self.loss = 0.3
            self.at(self.now + duration, self._end_loss_burst)

    def _end_loss_burst(self) -> None:
        if not self.healed:
            self.loss = self.config.loss

    def _cut_for(self, links: set[tuple[int, int]], duration: int) -> None:
        fresh = links - self.cut
        self.cut |= fresh
        self.at(self.now + duration, self._heal_links, fresh)

    def _heal_links(self, links: set[tuple[int, int]]) -> None:
        self.cut -= links

    def crash(self, b: SimBroker) -> None:
        b.crash()
        self.trace_line(f"{b} crashed at log end {b.log.log_end_offset}")
        # The kernel closes its sockets: its leader and the controller usually notice.
        for other in self.brokers.values():
            leader = other.replica.leader if other.replica is not None else None
            if other.up and not other.paused and leader is not None and self.rng.random() < 0.7:
                leader.follower_disconnected(
                    b.node_id, self.now, self.config.lag_max_ms, self.config.disconnect_grace_ms
                )
        if self.rng.random() < 0.7:
            self.controller.connection_lost(b.node_id)

    def restart(self, b: SimBroker) -> None:
        if not b.up:
            self.trace_line(f"{b} restarts")
            b.start()

    def resume(self, b: SimBroker) -> None:
        if b.up and b.paused:
            b.paused = False
            deferred, b.deferred = b.deferred, []
            for fn, args in deferred:
                self.at(self.now, self._on_broker, b, b.incarnation, fn, args)

    def heal(self) -> None:
        """End of the fault phase: everything up, connected, and the network reliable."""
        self.healed = True
        self.loss = 0.0
        self.duplication = 0.0
        self.cut.clear()
        for b in self.brokers.values():
            b.metadata_stalled_until = 0
            if not b.up:
                self.restart(b)
            elif b.paused:
                self.resume(b)
        if self.controller.cluster.leader_id is None:
            self.controller._elected(VOTERS[0])
        self.trace_line("healed")

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

    def consumer_tick(self) -> None:
        self.at(self.now + self.config.consumer_every_ms, self.consumer_tick)
        b = self.brokers[self.rng.choice(BROKERS)]
        self.send(CONSUMER, b.node_id, b.on_consumer_fetch, None)

    async def run(self) -> SimResult:
        self.controller.cluster.elect(VOTERS[0])
        self.controller.become_active()
        self.at(0, self.controller.tick)
        for b in self.brokers.values():
            self.at(self.rng.randint(0, 20), b.start)
        self.at(100, self.producer.tick)
        self.at(50, self.consumer_tick)
        self.at(self.config.fault_ms // 6, self.nemesis)
        self.at(self.config.fault_ms, self.heal)
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


def run_seed(
    seed: int, bug: Bug | None = None, trace: bool = False, driver_fix: bool = True
) -> SimResult:
    """One complete run (faults, healing, final checks); deterministic in ``seed``.

    ``driver_fix`` (default) runs the ISR manager as isr_manager.py does; False replays the
    old behaviour that lost records (see :meth:`SimBroker._alter_finished`).
    """
    return trio.run(Simulation(seed, bug, trace, driver_fix).run)


def main(argv: list[str]) -> int:
    """Replay seeds with a trace of the last events: ``replication_sim.py SEED [BUG]``."""
    seed = int(argv[1])
    bug = Bug(argv[2]) if len(argv) > 2 else None
    result = run_seed(seed, bug, trace=True)
    print("\n".join(result.trace))
    print(
        f"seed {seed}: {result.events} events, {result.end_ms}ms, {result.acked} acked, "
        f"{result.leader_epochs} epochs written"
    )
    print(result.violation or "ok")
    return 1 if result.violation else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
