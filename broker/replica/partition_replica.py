"""One partition hosted on this node: its log, its high watermark and who waits on them.

The high watermark is the end of what consumers may see (docs/replication.md): the smallest log end
offset over the in-sync replicas. As leader, this replica keeps a
:class:`~rillet.broker.replica.replication.leader_state.LeaderState` fed by its appends and its
followers' fetches; as follower, it takes the high watermark its leader reports (capped at
its own log end). The leader's own contribution is its log end offset when the flush policy
relies on the page cache (the default, like Kafka), or its fsynced end when
``flush_messages`` / ``flush_ms`` are set. Only records below the high watermark are ever
returned to consumers, and acks=all waits for it.

Waiters are trio events in two sets: consumer fetches wake when the high watermark moves,
follower fetches when the log end moves (they copy records before they are committed). One
wake-up serves a long poll over many partitions.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import trio

from rillet.broker.errors import SequenceGapAfterElection
from rillet.broker.replica.offset_waiters import OffsetWaiters
from rillet.broker.replica.replica_role import FetchApplied, ReplicaRole, TopicPartitionKey
from rillet.broker.replica.replication.follower_state import (
    divergence_truncation_offset,
    plan_out_of_range,
)
from rillet.broker.replica.replication.leader_state import IsrProposal, LeaderState
from rillet.broker.replica.replication.session_rounds import SessionRounds
from rillet.broker.runtime.invariants import require
from rillet.partition_store.batch_verify import BatchDamage
from rillet.partition_store.config import LogConfig
from rillet.partition_store.flush_plan import FlushPlan
from rillet.partition_store.log import AppendResult, PartitionLog
from rillet.partition_store.partition_files import PartitionFiles
from rillet.partition_store.producer_state import OutOfOrderSequence
from rillet.wire.atomic_file import SyncBatch
from rillet.wire.batch import read_header
from rillet.wire.control_batch import Marker
from rillet.wire.error_codes import ErrorCode
from rillet.wire.frame import FileRegion
from rillet.wire.messages import FetchPartition, FetchPartitionResponse

log = logging.getLogger(__name__)
# How long after an election a producer's first batch with a sequence gap is answered as
# retriable (broker.errors.SequenceGapAfterElection): the batches before it may still be
# on their way from a refusal by the previous leader (a client's retry backoff, a metadata
# refresh). Later, or once the producer wrote here, a gap is OUT_OF_ORDER_SEQUENCE.
SEQUENCE_GAP_SETTLE_MS = 10_000


class PartitionReplica:
    """Driver-side state of one local partition replica (leader or follower)."""

    def __init__(
        self,
        key: TopicPartitionKey,
        log: PartitionLog,
        request_flush: Callable[[], None],
        leader_epoch: int = 0,
        topic_id: str = "",
    ) -> None:
        self.key = key
        self.log = log
        self.topic_id = topic_id
        self.leader_epoch = leader_epoch
        self.role: ReplicaRole | None = None
        self.leader: LeaderState | None = None
        self._flush_driven = log.config.forces_fsync
        self._files = PartitionFiles(log.directory)
        # What this replica last knew to be committed; the leader (or the election of this
        # one) moves it on. Nothing above it is served before then.
        checkpoint = self._files.read_high_watermark()
        self._high_watermark = min(checkpoint or 0, log.log_end_offset)
        self.checkpointed_high_watermark = checkpoint
        self._waiters: set[trio.Event] = set()
        self._follower_waiters: set[trio.Event] = set()
        self._hw_waiters = OffsetWaiters()  # acks=all produce requests
        self._log_start_waiters = OffsetWaiters()  # DeleteRecords requests
        self._request_flush = request_flush
        # Bumped whenever an answer to a caught-up follower could change (fetch sessions
        # skip partitions whose counter did not move: replication.fetch_session).
        self._news = 0
        # The last fetch position built as follower, and the object: an idle follower of
        # thousands of partitions builds none per fetch round.
        self._fetch_position: tuple[tuple[int, int, int, int, int], FetchPartition] | None = None
        self.flush_requested = False
        self.deleted = False
        self.min_insync_replicas = 1  # topic config min.insync.replicas (acks=all)
        # Bit rot (docs/replication.md, "Damaged replicas"): the first damaged batch found,
        # and whether the controller found no other in-sync replica to take over.
        self.damage: BatchDamage | None = log.damage
        self.handover_refused = False
        # A leader that hears neither the controller nor an in-sync follower
        # (replication/stranded_leaders.py): it refuses writes, so clients look elsewhere.
        self.stranded = False
        self.on_damage: Callable[[], None] = _nothing
        # Per follower, the fetch offset of the last answer that carried records: a fetch
        # from the same offset again means the follower could not append them (its report of
        # a bad CRC), so that range is checked again.
        self._served_followers: dict[int, int] = {}
        # Traffic and ISR-change counters for /metrics: bumped once per batch or change,
        # never per record, and read at scrape time.
        self.bytes_in = 0
        self.records_in = 0
        self.bytes_out = 0
        self.isr_shrinks = 0
        self.isr_expands = 0
        self.cleaner_bytes_read = 0  # by the log cleaner (broker/replica/log_cleaner.py)
        self.cleaner_last_clean_ms = -1

    # -- role -------------------------------------------------------------------------------

    @property
    def is_leader(self) -> bool:
        return self.leader is not None

    @property
    def news(self) -> int:
        return self._news

    @property
    def fetch_state(self) -> tuple[int, int, int, int]:
        """What an answer to a follower says of this replica now (fetch sessions compare
        it): high watermark, log start, log end, leader epoch."""
        plog = self.log
        return (self._high_watermark, plog.log_start_offset, plog.log_end_offset, self.leader_epoch)

    def set_role(self, role: ReplicaRole, now_ms: int) -> None:
        """Apply the committed state of this partition (called on every change)."""
        self._news += 1
        previous = self.role
        require(
            previous is None or role.leader_epoch >= previous.leader_epoch,
            f"{self.log.directory.name}: leader epoch went back from "
            f"{previous.leader_epoch if previous else None} to {role.leader_epoch}",
        )
        self.role = role
        self.leader_epoch = role.leader_epoch
        self.stranded = False  # the committed state reached us: not cut off any more
        if not role.is_leader:
            if self.leader is not None:
                self.leader = None
                self._release_acks_waiters()  # acks=all on a deposed leader: NOT_LEADER now
                self.wake_all()
            if self.damage is not None and role.node_id not in role.isr:
                # Out of the ISR now (it asked to be): cut before any fetch appends.
                self.truncate_damaged()
            return
        if (
            self.leader is None
            or previous is None
            or previous.leader_epoch != role.leader_epoch
            or not previous.is_leader
        ):
            self.leader = LeaderState(
                node_id=role.node_id,
                replicas=role.replicas or (role.node_id,),
                isr=role.isr,
                leader_epoch=role.leader_epoch,
                partition_epoch=role.partition_epoch,
                high_watermark=self._high_watermark,
                epoch_start_offset=self.log.log_end_offset,
                now_ms=now_ms,
            )
            self.log.start_leader_epoch(role.leader_epoch)
            # Waiters of an earlier leadership: their batches may have been truncated while
            # this replica followed in between (its view can skip the follower state).
            self._release_acks_waiters()
        else:
            before = set(self.leader.isr)
            if role.replicas and role.replicas != previous.replicas:
                self.leader.on_replicas(role.replicas)
            self.leader.on_committed(role.isr, role.partition_epoch, now_ms)
            self.isr_shrinks += bool(before - set(role.isr))
            self.isr_expands += bool(set(role.isr) - before)
        self._leader_end_moved()

    def in_sync_count(self) -> int:
        """Size of the committed ISR (0 when not leading)."""
        return len(self.leader.isr) if self.leader is not None else 0

    @property
    def config(self) -> LogConfig:
        return self.log.config

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    @property
    def high_watermark_settled(self) -> bool:
        """False while a newly elected leader's high watermark is below the start of its
        epoch: followers learn the high watermark one fetch late, so it may still be below
        what the previous leader already exposed (and acknowledged). Offsets derived from it
        are then not answered (OFFSET_NOT_AVAILABLE, as Kafka's KIP-207), never moved back."""
        return self.leader is None or self._high_watermark >= self.leader.epoch_start_offset

    @property
    def local_committable_end(self) -> int:
        """How far this replica's own log counts towards the high watermark."""
        return self.log.recovery_point if self._flush_driven else self.log.log_end_offset

    # -- leader -----------------------------------------------------------------------------

    def append_as_leader(
        self,
        records: bytes | bytearray | memoryview | FileRegion,
        now_ms: int,
        steady_ms: int | None = None,
    ) -> AppendResult:
        """Append as leader: ``now_ms`` (wall) stamps and rolls, ``steady_ms`` (the clock
        :class:`LeaderState` runs on, broker.clock; default ``now_ms``) times the settle
        window after an election."""
        if isinstance(records, FileRegion):
            raise TypeError("produced records arrive as bytes, never as a file region")
        end_before = self.log.log_end_offset
        try:
            result = self.log.append_as_leader(records, self.leader_epoch, now_ms)
        except OutOfOrderSequence as exc:
            if self._gap_may_close(records, now_ms if steady_ms is None else steady_ms):
                raise SequenceGapAfterElection(
                    f"{self.key}: {exc}, just after an election"
                ) from None
            raise
        # acks=all waits for the offsets given here: they must be the log's next ones.
        require(
            result.duplicate or result.first_offset == end_before,
            f"{self.key}: append placed at offset {result.first_offset}, the log ended at "
            f"{end_before}",
        )
        self.bytes_in += result.size_bytes
        self.records_in += result.record_count
        self._after_leader_append(now_ms)
        return result

    def append_marker_as_leader(self, marker: Marker, now_ms: int) -> AppendResult:
        """Write a transaction marker (WriteTxnMarkers) in this leader's epoch; replicated
        and committed like any batch (the caller waits for the high watermark to pass it)."""
        result = self.log.append_marker_as_leader(marker, self.leader_epoch, now_ms)
        self._after_leader_append(now_ms)
        return result

    def _after_leader_append(self, now_ms: int) -> None:
        self._wake_followers()
        if self._flush_driven and self.log.needs_flush(now_ms):
            self.flush_requested = True
            self._request_flush()
        self._leader_end_moved()

    def _gap_may_close(self, records: bytes | bytearray | memoryview, now_ms: int) -> bool:
        """A sequence gap in the producer's first batch under a leadership younger than
        :data:`SEQUENCE_GAP_SETTLE_MS`: its earlier batches may still arrive."""
        leader = self.leader
        if leader is None or now_ms - leader.elected_ms >= SEQUENCE_GAP_SETTLE_MS:
            return False
        last = self.log.producer_last_offset(read_header(records).producer_id)
        return last is not None and last < leader.epoch_start_offset

    def on_follower_fetch(
        self,
        replica_id: int,
        fetch_offset: int,
        now_ms: int,
        request_arrived_ms: int | None = None,
        log_start_offset: int = -1,
    ) -> None:
        """A follower asked for records from ``fetch_offset``: it holds everything below;
        its log start is ``log_start_offset`` (-1: not reported)."""
        leader = self.leader
        if leader is None:
            return
        # The high watermark counts this as held by the follower: never beyond this log.
        require(
            fetch_offset <= self.log.log_end_offset,
            f"{self.key}: follower {replica_id} counted at offset {fetch_offset}, beyond the "
            f"log end {self.log.log_end_offset}",
        )
        if leader.on_follower_fetch(
            replica_id,
            fetch_offset,
            self.local_committable_end,
            now_ms,
            request_arrived_ms,
            log_start_offset,
        ):
            self._high_watermark_moved(leader.high_watermark)
        self._log_start_waiters.advance(self.low_watermark, self.leader_epoch)

    def follower_quiet(self, replica_id: int, rounds: SessionRounds) -> None:
        """The partition went quiet in follower ``replica_id``'s fetch session, the follower
        caught up (replication.fetch_session): as leader, count it caught up at each round."""
        if self.leader is not None:
            self.leader.follower_quiet(replica_id, rounds)

    def follower_resumed(self, replica_id: int, rounds: SessionRounds) -> None:
        """That session reads the partition again."""
        if self.leader is not None:
            self.leader.follower_resumed(replica_id, rounds)

    def set_stranded(self, stranded: bool) -> None:
        """Mark this leader cut off (or not). Becoming so ends the acks=all waits at once,
        with NOT_LEADER_OR_FOLLOWER (acks_verdict): their clients would otherwise wait out
        their request timeout before looking for the partition's new leader."""
        if stranded and not self.stranded and self.leader is not None:
            self._hw_waiters.release_all()
        self.stranded = stranded and self.leader is not None

    def isr_change(
        self, now_ms: int, lag_max_ms: int, may_remove: bool = True
    ) -> IsrProposal | None:
        """As leader, the ISR change to propose now, if any (none while one is in flight):
        followers lagging over ``lag_max_ms`` leave (unless not ``may_remove``), caught-up
        ones join."""
        if self.leader is None or self.deleted:
            return None
        return self.leader.isr_change(self.local_committable_end, now_ms, lag_max_ms, may_remove)

    def flush_due(self, now_ms: int) -> FlushPlan | None:
        """The fsync to run now, if one was asked for, the flush policy wants one, or the
        high watermark waits for it; hand it back to :meth:`flush_done` once it ran (off the
        event loop, on a node)."""
        if self.deleted or not (
            self.flush_requested or self.log.needs_flush(now_ms) or self._commit_needs_fsync()
        ):
            return None
        self.flush_requested = False
        return self.log.flush_plan()

    def _commit_needs_fsync(self) -> bool:
        """A leader whose high watermark waits for its fsyncs, with unflushed records and no
        time bound on them (``flush.messages`` alone): without a flush now, a tail shorter
        than ``flush.messages`` would never commit, and acks=all writes of it would time out
        (the replication simulation found it, seed 1029). With ``flush.ms`` set, that bound
        flushes the tail anyway."""
        return (
            self._flush_driven
            and self.leader is not None
            and self.log.config.flush_ms < 0
            and self.log.recovery_point < self.log.log_end_offset
        )

    def follower_flush_due(self) -> bool:
        """As a follower of a topic that forces fsyncs, whether appended records are not
        durable yet: they are fsynced before the next fetch reports them to the leader (its
        high watermark, hence acks=all, moves on the reported offsets)."""
        return (
            self._flush_driven
            and self.leader is None
            and not self.deleted
            and self.log.recovery_point < self.log.log_end_offset
        )

    def flush_done(self, plan: FlushPlan) -> None:
        """A plan from :meth:`flush_due` ran: adopt its recovery point, and expose what is
        now durable when the high watermark waits for fsyncs."""
        if not self.deleted:
            self.log.flush_completed(plan)
            self.on_flushed()

    def on_flushed(self) -> None:
        """Called by the flush task after ``flush_completed``; exposes what is durable."""
        if self._flush_driven:
            self._leader_end_moved()

    def _leader_end_moved(self) -> None:
        if self.leader is not None:
            self.leader.update_high_watermark(self.local_committable_end)
            self._high_watermark_moved(self.leader.high_watermark)
            self._log_start_waiters.advance(self.low_watermark, self.leader_epoch)

    # -- log start (DeleteRecords) ------------------------------------------------------------

    @property
    def low_watermark(self) -> int:
        """As leader, the smallest log start over the in-sync replicas (-1 while one has not
        reported it); as follower, its own log start."""
        if self.leader is None:
            return self.log.log_start_offset
        return self.leader.low_watermark(self.log.log_start_offset)

    def advance_log_start(self, offset: int) -> None:
        """As leader, delete the records below ``offset`` (at most the high watermark:
        uncommitted records may still be truncated, so they cannot be deleted either)."""
        require(
            self.leader is not None and offset <= self._high_watermark,
            f"{self.key}: log start {offset} beyond the high watermark or not leading",
        )
        self.log.advance_log_start_offset(offset)
        self._wake_followers()  # their answers carry the new log start; next fetches report it
        self._log_start_waiters.advance(self.low_watermark, self.leader_epoch)

    async def wait_for_low_watermark(self, offset: int, leader_epoch: int) -> bool:
        """Until every in-sync replica's log start reaches ``offset`` while this replica
        leads in ``leader_epoch`` (True), or it stops leading in it (False)."""
        if not self.is_leader or self.leader_epoch != leader_epoch or self.deleted:
            return False
        if self.low_watermark >= offset:
            return True
        return await self._log_start_waiters.wait(offset, leader_epoch)

    def enforce_retention(self, now_ms: int) -> int:
        """Delete this log's expired segments; returns how many. A leader's new log start is
        news to its followers (their fetch sessions may hold the partition quiet)."""
        deleted = self.log.delete_expired_segments(now_ms)
        if deleted and self.is_leader:
            self._wake_followers()
        return deleted

    def follow_log_start(self, leader_log_start_offset: int) -> None:
        """The leader's log start, as reported in a fetch answer: records it deleted are
        deleted here too (never beyond this replica's own log end)."""
        target = min(leader_log_start_offset, self.log.log_end_offset)
        if target > self.log.log_start_offset:
            self.log.advance_log_start_offset(target)

    # -- follower ---------------------------------------------------------------------------

    def append_as_follower(self, records: bytes | bytearray | memoryview, now_ms: int) -> None:
        self.log.append_as_follower(records, now_ms)

    def follow_high_watermark(self, leader_high_watermark: int) -> None:
        """The leader's high watermark, as reported in a fetch response."""
        self._high_watermark_moved(min(leader_high_watermark, self.log.log_end_offset))

    def fetch_partition(self, max_bytes: int) -> FetchPartition:
        """As follower, what to ask the leader for: records from this log's end, in the
        leader epoch this replica knows, with its last epoch (the leader's divergence
        check) and its log start (the leader's low watermark)."""
        plog = self.log
        position = (
            plog.log_end_offset,
            max_bytes,
            self.leader_epoch,
            plog.epoch_history.latest_epoch(),
            plog.log_start_offset,
        )
        cached = self._fetch_position
        if cached is not None and cached[0] == position:
            return cached[1]  # the same object: a fetch session sees at once it did not move
        part = FetchPartition(self.key.topic, self.key.partition, *position)
        self._fetch_position = (position, part)
        return part

    def apply_fetch_answer(
        self,
        answer: FetchPartitionResponse,
        fetch_offset: int,
        leader_epoch: int,
        now_ms: int,
        log_truncations: int,
    ) -> FetchApplied:
        """As follower, use the leader's answer to a fetch sent from ``fetch_offset`` in
        ``leader_epoch``: append its records and take its high watermark and log start, or
        cut a diverging suffix (KIP-320), or step after an offset out of range.

        An answer is stale (and ignored) when the partition changed since the fetch was
        sent: another role or epoch, a truncation, an append by a newer fetch.
        ``log_truncations`` (the log's ``truncations`` when the fetch was sent) catches a
        log cut and refilled to the same end meanwhile (found by the replication simulation,
        seed 5975: a late divergence answer cut records committed since). The high
        watermark never passes the log end here, whatever the answer says. Store and record
        errors propagate (nothing was changed by a refused append).
        """
        plog = self.log
        role = self.role
        if (
            self.deleted
            or role is None
            or role.is_leader
            or self.leader_epoch != leader_epoch
            or plog.log_end_offset != fetch_offset
            or plog.truncations != log_truncations
        ):
            return FetchApplied.STALE
        diverging = answer.diverging_epoch >= 0 or answer.diverging_end_offset >= 0
        if answer.error_code == ErrorCode.NONE and not diverging:
            records = answer.records
            if len(records) > 0:
                # Decoded answers carry bytes or a view of the received frame (appended
                # without a copy); a file region exists only on the leader's side.
                assert not isinstance(records, FileRegion)
                plog.append_as_follower(records, now_ms)
            self.follow_high_watermark(answer.high_watermark)
            self.follow_log_start(answer.log_start_offset)
            return FetchApplied.APPENDED
        if answer.error_code == ErrorCode.NONE:
            target = divergence_truncation_offset(
                answer.diverging_epoch,
                answer.diverging_end_offset,
                plog.end_offset_for_epoch,
                plog.log_end_offset,
            )
            cut = plog.truncate_at_or_below(target)
            log.info("%s diverged from its leader: truncated to %d", self.key, cut)
        else:
            step = plan_out_of_range(
                answer.error_code,
                plog.log_end_offset,
                answer.log_start_offset,
                answer.log_end_offset,
            )
            if step.truncate_to is not None:
                plog.truncate_at_or_below(step.truncate_to)
            elif step.restart_at is not None:
                plog.truncate_fully_and_start_at(step.restart_at)
            else:
                return FetchApplied.BACK_OFF  # not the leader (yet), an epoch mismatch
        self._after_truncation()
        return FetchApplied.TRUNCATED

    def _after_truncation(self) -> None:
        """The log was cut: nothing above its new end is committed here."""
        self._news += 1
        self._high_watermark = min(self._high_watermark, self.log.log_end_offset)

    # -- damage (bit rot) -------------------------------------------------------------------

    def report_damage(self, damage: BatchDamage) -> None:
        """A read or a scrub found a batch of this replica that fails its CRC check.

        Nothing of it is served; the repair task (``replica_repair``) takes the replica out
        of the ISR, then cuts its log before the batch so that it re-fetches the rest.
        """
        if self.damage is not None and self.damage.offset <= damage.offset:
            return
        self.damage = damage
        self._news += 1
        log.error(
            "%s: damaged batch at offset %d in %s, position %d (%s): not served; the "
            "replica leaves the ISR and re-fetches from offset %d",
            self.key,
            damage.offset,
            damage.segment_path,
            damage.position,
            damage.reason,
            damage.offset,
        )
        self.on_damage()

    def follower_refetches(self, replica_id: int, fetch_offset: int) -> bool:
        """Whether the follower asks again for records it was just sent (see above)."""
        return self._served_followers.get(replica_id) == fetch_offset

    def served_follower(self, replica_id: int, fetch_offset: int, with_records: bool) -> None:
        if with_records:
            self._served_followers[replica_id] = fetch_offset
        else:
            self._served_followers.pop(replica_id, None)

    def damaged_read_error(self) -> ErrorCode:
        """The answer to a fetch of a damaged range: NOT_LEADER_OR_FOLLOWER while the
        leadership moves to a healthy replica (clients refresh their metadata and retry
        there), CORRUPT_MESSAGE (retriable) when this copy is the only in-sync one."""
        if self.handover_refused or self.in_sync_count() <= 1:
            return ErrorCode.CORRUPT_MESSAGE
        return ErrorCode.NOT_LEADER_OR_FOLLOWER

    def truncate_damaged(self) -> None:
        """Cut the log before the damaged batch (only once out of the ISR: its copy no
        longer counts as committed) and forget the damage; the fetcher re-fetches from
        there and the leader adds the replica back once it has caught up."""
        damage = self.damage
        if damage is None:
            return
        end = self.log.truncate_to_damage(damage)
        self._after_truncation()
        self.damage = self.log.damage
        self.handover_refused = False
        log.warning(
            "%s: cut the log at offset %d, before the damaged batch in %s; re-fetching it",
            self.key,
            end,
            damage.segment_path,
        )

    # -- waiting ----------------------------------------------------------------------------

    @property
    def acks_waiter_count(self) -> int:
        """acks=all produce requests waiting for the high watermark."""
        return len(self._hw_waiters)

    @property
    def fetch_waiter_count(self) -> int:
        """Long-polling fetches (consumers' and followers') parked on this partition."""
        return len(self._waiters) + len(self._follower_waiters)

    def _high_watermark_moved(self, offset: int) -> None:
        if offset <= self._high_watermark:
            return
        require(
            offset <= self.log.log_end_offset,
            f"{self.log.directory.name}: high watermark {offset} beyond the log end "
            f"{self.log.log_end_offset}",
        )
        self._high_watermark = offset
        self._news += 1
        for event in self._waiters:
            event.set()
        self._waiters.clear()
        if self.is_leader:
            self._hw_waiters.advance(offset, self.leader_epoch)

    def _wake_followers(self) -> None:
        self._news += 1
        for event in self._follower_waiters:
            event.set()
        self._follower_waiters.clear()

    def wake_all(self) -> None:
        """Wake every long-polling fetch on this partition (new data, deletion, shutdown)."""
        for event in self._waiters:
            event.set()
        self._waiters.clear()
        self._wake_followers()

    def _release_acks_waiters(self) -> None:
        self._hw_waiters.release_all()
        self._log_start_waiters.release_all()

    def mark_deleted(self) -> None:
        """The partition is being deleted: release every waiter so none hangs on it."""
        self.deleted = True
        self.leader = None
        self.wake_all()
        self._release_acks_waiters()

    def register_waiter(self, event: trio.Event, follower: bool = False) -> None:
        (self._follower_waiters if follower else self._waiters).add(event)

    def unregister_waiter(self, event: trio.Event) -> None:
        self._waiters.discard(event)
        self._follower_waiters.discard(event)

    def acks_progress(self, offset: int, leader_epoch: int) -> bool | None:
        """Where an acks=all wait for the high watermark to reach ``offset``, begun while
        leading in ``leader_epoch`` (the epoch the batch was appended in), stands: True
        reached, False never in this leadership (it ended, or the partition is deleted),
        None not yet. Records appended by a deposed leader may be truncated, so the offset
        reached as a follower, or in a later leadership of this replica, proves nothing."""
        if not self.is_leader or self.leader_epoch != leader_epoch or self.deleted:
            return False
        if self._high_watermark >= offset:
            return True
        return None

    async def wait_for_high_watermark(self, offset: int, leader_epoch: int) -> bool:
        """Wait until :meth:`acks_progress` decides: True once the high watermark reaches
        ``offset`` in ``leader_epoch``, False once that leadership ends or this leader is
        cut off (:meth:`set_stranded`; a wait that begins then, behind another partition's
        wait in the same request, ends at once too)."""
        progress = self.acks_progress(offset, leader_epoch)
        if progress is not None:
            return progress
        if self.stranded:
            return False
        return await self._hw_waiters.wait(offset, leader_epoch)

    # -- checkpoint -------------------------------------------------------------------------

    def checkpoint_high_watermark(
        self, durable: bool = True, batch: SyncBatch | None = None
    ) -> None:
        """Blocking: persist the high watermark if it moved (run it off the event loop).
        The periodic checkpoint is not ``durable`` (atomic, not fsynced:
        PartitionFiles.write_high_watermark); a clean close makes it durable (at once, or
        when ``batch`` commits)."""
        value = self._high_watermark
        if value != self.checkpointed_high_watermark:
            self._files.write_high_watermark(value, durable, batch)
            self.checkpointed_high_watermark = value


def _nothing() -> None:
    return None
