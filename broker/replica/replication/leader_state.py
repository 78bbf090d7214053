"""What a partition leader knows about its followers: the pure core of ISR replication.

Fed with follower fetches, the leader's own log end offset and the committed partition
state, it answers three questions, with no I/O and time passed in as ``now_ms`` (the
node's steady clock, broker.clock: a wall clock stepped hours must not move lags):

- the high watermark: the smallest log end offset over the in-sync replicas. It never moves
  backwards, and it counts a follower only once that follower has fetched in this leadership
  (a new leader does not know where its followers are, so until they fetch it keeps the high
  watermark it had);
- which ISR change to ask the controller for: remove a follower that has not caught up for
  ``replica_lag_time_max_ms``, add one that has reached the high watermark and this leader's
  first offset (so it holds everything this leader committed);
- which ISR to rely on meanwhile. A change takes effect only once it is committed in the
  metadata log; until then the high watermark uses the *maximal* ISR, the union of the
  committed and the proposed one (Kafka's KIP-497). A shrink therefore never commits a record
  on fewer replicas than the committed ISR names, and an expansion starts counting the new
  member at once, so that it is safe whichever way the controller decides. When the decision
  is not known (no answer; or a refusal against a newer partition epoch, which a retry of a
  proposal committed under a lost answer gets), the proposed members keep counting until the
  metadata log shows a partition state newer than the one the proposal was based on.

A follower counts as caught up at a fetch when its fetch offset reaches the leader's log end
offset at that moment, or the log end offset the leader had at the follower's previous fetch
(then it was caught up when that previous fetch happened): a follower that keeps pace with a
steady stream of appends never looks behind just because new records keep arriving.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rillet.broker.replica.replication.session_rounds import SessionRounds
from rillet.wire.error_codes import ErrorCode

UNKNOWN_OFFSET = -1
# A follower of a new partition (this leadership began at offset 0) that has not fetched it
# yet keeps its ISR place for this many ``replica_lag_time_max_ms`` from the election, not
# one: a node creating thousands of partitions takes tens of seconds to open their logs,
# and dropping each follower still opening, then adding it back, made thousands of ISR
# changes for the controller (10,000 partitions: about 600 per node waiting out its 5 s
# answer timeout). A follower that is gone is fenced by the controller within its session
# timeout anyway, and one whose fetch connection closes loses the grace at once.
NEW_PARTITION_GRACE_LAGS = 3


@dataclass(slots=True)
class FollowerProgress:
    log_end_offset: int = UNKNOWN_OFFSET  # its fetch offset; unknown until it fetches
    last_caught_up_ms: int = 0
    last_fetch_ms: int = 0
    leader_end_at_last_fetch: int = UNKNOWN_OFFSET
    # It fetched from below the high watermark while in the ISR: it lost committed records
    # (a replica that cut a damaged batch), so the next check removes it.
    lost_committed: bool = False
    # When the committed ISR last dropped it: fetch requests that arrived before then carry
    # offsets from before (a long poll parked on this leader), not what it holds now.
    left_isr_ms: int = -1
    # Its own log start, as its fetches report it (DeleteRecords waits for the ISR's).
    log_start_offset: int = UNKNOWN_OFFSET
    # Neither fetched nor lost its connection in this leadership: of a new partition, it
    # may still be creating the log (see NEW_PARTITION_GRACE_LAGS).
    silent: bool = True
    # Caught up on a partition gone quiet in its fetch session (replication.fetch_session):
    # caught up as of the session's latest round, with no read of the partition.
    quiet_rounds: SessionRounds | None = None

    def caught_up_ms(self) -> int:
        """When it was last known caught up, a quiet session's latest round included."""
        rounds = self.quiet_rounds
        if rounds is None:
            return self.last_caught_up_ms
        return max(self.last_caught_up_ms, rounds.last_ms)

    def settle_quiet(self) -> None:
        """Read again: keep the last round that found it quiet as a fetch at the log end."""
        rounds, self.quiet_rounds = self.quiet_rounds, None
        if rounds is not None and rounds.last_ms > self.last_fetch_ms:
            self.last_caught_up_ms = max(self.last_caught_up_ms, rounds.last_ms)
            self.last_fetch_ms = rounds.last_ms


@dataclass(frozen=True, slots=True)
class IsrProposal:
    """An ISR change sent to the controller, against the partition epoch it was based on."""

    isr: tuple[int, ...]
    partition_epoch: int


@dataclass(slots=True)
class LeaderState:
    node_id: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]  # committed
    leader_epoch: int
    partition_epoch: int
    high_watermark: int
    epoch_start_offset: int  # this leader's first offset (its log end when it was elected)
    now_ms: int
    pending: IsrProposal | None = None
    followers: dict[int, FollowerProgress] = field(default_factory=dict)
    # Proposals whose outcome is unknown: the controller may have committed them.
    unconfirmed: IsrProposal | None = None
    elected_ms: int = -1  # when this leadership began here (``now_ms`` at construction)

    def __post_init__(self) -> None:
        if self.elected_ms < 0:
            self.elected_ms = self.now_ms
        for replica in self.replicas:
            if replica != self.node_id:
                # ISR members get a full lag window from the election to prove themselves.
                caught_up = self.now_ms if replica in self.isr else 0
                self.followers[replica] = FollowerProgress(last_caught_up_ms=caught_up)

    # -- the ISR ------------------------------------------------------------------------------

    @property
    def maximal_isr(self) -> tuple[int, ...]:
        if self.pending is None and self.unconfirmed is None:
            return self.isr
        members = set(self.isr)
        for proposal in (self.pending, self.unconfirmed):
            if proposal is not None:
                members |= set(proposal.isr)
        return tuple(sorted(members))

    def on_replicas(self, replicas: tuple[int, ...]) -> None:
        """The committed replica set changed within this leadership (a reassignment): new
        replicas are followed from their first fetch, removed ones forgotten."""
        self.replicas = replicas
        for replica in replicas:
            if replica != self.node_id and replica not in self.followers:
                self.followers[replica] = FollowerProgress(last_caught_up_ms=0)
        for replica in [r for r in self.followers if r not in replicas]:
            del self.followers[replica]

    def on_committed(
        self, isr: tuple[int, ...], partition_epoch: int, now_ms: int | None = None
    ) -> None:
        """The metadata log committed a partition state for this leadership."""
        if partition_epoch == self.partition_epoch and isr == self.isr:
            return
        if now_ms is not None:
            self.now_ms = max(self.now_ms, now_ms)
        previous = set(self.isr)
        self.isr = isr
        self.partition_epoch = partition_epoch
        self.pending = None  # whatever was proposed was decided (or overtaken by this state)
        if self.unconfirmed is not None and partition_epoch > self.unconfirmed.partition_epoch:
            self.unconfirmed = None  # this state reflects (or overrides) its decision
        for replica, progress in self.followers.items():
            if replica in isr and progress.last_caught_up_ms == 0:
                progress.last_caught_up_ms = self.now_ms
            elif replica not in isr:
                # Out of the ISR (perhaps by its own request, to cut a damaged copy): it
                # rejoins only on a fetch made since, never on the offset it had before.
                progress.log_end_offset = UNKNOWN_OFFSET
                progress.leader_end_at_last_fetch = UNKNOWN_OFFSET
                progress.quiet_rounds = None
                progress.lost_committed = False
                if replica in previous:
                    progress.left_isr_ms = self.now_ms

    def proposal_failed(self) -> None:
        """The controller refused the proposal against the partition epoch it was based on,
        so it did not happen: propose again from the committed ISR.

        Not for a lost answer, nor for a refusal that names a newer partition epoch: the
        proposal may have been committed (see :meth:`proposal_outcome_unknown`).
        """
        self.pending = None

    def proposal_outcome_unknown(self) -> None:
        """No answer, or a refusal naming a newer partition epoch: the controller may have
        committed the proposal (a retry of a committed proposal is refused as stale). Until
        the metadata log shows a partition state newer than the proposal's, its members keep
        counting towards the high watermark (an expansion may be in the committed ISR, and
        the next election may pick the new member); a new proposal may be made meanwhile,
        and the controller's answer to it settles the question at that epoch.
        """
        pending, self.pending = self.pending, None
        if pending is None:
            return
        if self.unconfirmed is not None and (
            self.unconfirmed.partition_epoch == pending.partition_epoch
        ):
            members = tuple(sorted(set(self.unconfirmed.isr) | set(pending.isr)))
            pending = IsrProposal(members, pending.partition_epoch)
        self.unconfirmed = pending

    def settle_proposal(
        self, proposal: IsrProposal, error_code: int | None, answered_partition_epoch: int = -1
    ) -> None:
        """The controller's answer to ``proposal`` (``error_code`` None: no answer came).

        Only a refusal against the partition epoch the proposal was based on proves it did
        not happen (:meth:`proposal_failed`). No answer, or a refusal naming a newer
        partition epoch (the answer a retry of an already committed change gets), leaves the
        outcome open (:meth:`proposal_outcome_unknown`). An acceptance that did not move the
        partition epoch changed nothing. An acceptance that did waits for the metadata log
        (:meth:`on_committed`). A proposal already replaced or reconciled is left alone.
        """
        if self.pending is not proposal:
            return
        if error_code is None:
            self.proposal_outcome_unknown()
        elif error_code != ErrorCode.NONE:
            if answered_partition_epoch == proposal.partition_epoch:
                self.proposal_failed()
            else:
                self.proposal_outcome_unknown()
        elif answered_partition_epoch <= self.partition_epoch:
            self.proposal_failed()

    def _still_opening(self, p: FollowerProgress, lag_max_ms: int, now_ms: int) -> bool:
        """Whether a lagging ISR member keeps its place as a follower of a new partition
        that may still be creating its log (NEW_PARTITION_GRACE_LAGS)."""
        return (
            p.silent
            and not p.lost_committed
            and self.epoch_start_offset == 0
            and now_ms - self.elected_ms <= NEW_PARTITION_GRACE_LAGS * lag_max_ms
        )

    def follower_disconnected(
        self, replica: int, now_ms: int, lag_max_ms: int, grace_ms: int
    ) -> None:
        """The follower's fetch connection closed (its process is likely gone): unless it
        fetches and catches up again within ``grace_ms``, the next check drops it from the
        ISR instead of waiting the whole ``lag_max_ms`` with acks=all writes stalled."""
        p = self.followers.get(replica)
        if p is not None:
            p.silent = False
            p.settle_quiet()
            self.now_ms = max(self.now_ms, now_ms)
            p.last_caught_up_ms = min(p.last_caught_up_ms, self.now_ms - lag_max_ms + grace_ms)

    def isr_change(
        self, leader_end_offset: int, now_ms: int, lag_max_ms: int, may_remove: bool = True
    ) -> IsrProposal | None:
        """The ISR change to propose now, if any (at most one is in flight). Without
        ``may_remove`` (this node hears no controller: it may be the one cut off), only
        followers joining are proposed."""
        self.now_ms = max(self.now_ms, now_ms)
        if self.pending is not None:
            return None
        isr = set(self.isr)
        for replica, p in self.followers.items():
            if replica in isr:
                if may_remove and self._lags(p, lag_max_ms):
                    isr.discard(replica)
            elif self._may_join(p, leader_end_offset):
                isr.add(replica)
        isr.add(self.node_id)
        proposed = tuple(sorted(isr))
        if proposed == tuple(sorted(self.isr)):
            return None
        self.pending = IsrProposal(proposed, self.partition_epoch)
        return self.pending

    def lagging_in_sync(self, now_ms: int, lag_max_ms: int) -> tuple[int, ...]:
        """The in-sync followers an ISR check would remove now (pure: proposes nothing).
        While any is left, no acks=all write of this leader can commit without the
        controller's agreement to a smaller ISR."""
        now_ms = max(self.now_ms, now_ms)
        return tuple(
            sorted(
                replica
                for replica, p in self.followers.items()
                if replica in self.isr and self._lags(p, lag_max_ms, now_ms)
            )
        )

    def _lags(self, p: FollowerProgress, lag_max_ms: int, now_ms: int | None = None) -> bool:
        now = self.now_ms if now_ms is None else now_ms
        lagging = p.lost_committed or now - p.caught_up_ms() > lag_max_ms
        return lagging and not self._still_opening(p, lag_max_ms, now)

    def _may_join(self, p: FollowerProgress, leader_end_offset: int) -> bool:
        """Caught up to the high watermark and to this leadership's first offset (so it
        holds every record this leader may have committed), as Kafka requires."""
        return p.log_end_offset != UNKNOWN_OFFSET and p.log_end_offset >= max(
            self.high_watermark, self.epoch_start_offset
        )

    # -- fetches and the high watermark ------------------------------------------------------

    def follower_quiet(self, replica: int, rounds: SessionRounds) -> None:
        """See NewsSource.follower_quiet (the follower is at this log's end)."""
        p = self.followers.get(replica)
        if p is not None and p.log_end_offset != UNKNOWN_OFFSET:
            p.quiet_rounds = rounds

    def follower_resumed(self, replica: int, rounds: SessionRounds) -> None:
        """See NewsSource.follower_resumed."""
        p = self.followers.get(replica)
        if p is not None and p.quiet_rounds is rounds:
            p.settle_quiet()

    def on_follower_fetch(
        self,
        replica: int,
        fetch_offset: int,
        leader_end_offset: int,
        now_ms: int,
        request_arrived_ms: int | None = None,
        log_start_offset: int = UNKNOWN_OFFSET,
    ) -> bool:
        """A follower fetched from ``fetch_offset`` (so it holds everything below it) and
        reported its log start (-1: not reported).

        Returns whether the high watermark advanced. Fetches from brokers that are not
        replicas of the partition are ignored, and so are requests that arrived (by
        ``request_arrived_ms``) before the follower last left the ISR.
        """
        self.now_ms = max(self.now_ms, now_ms)
        p = self.followers.get(replica)
        if p is None:
            return False
        if request_arrived_ms is not None and request_arrived_ms <= p.left_isr_ms:
            return False
        if fetch_offset < self.high_watermark and replica in self.maximal_isr:
            p.lost_committed = True
        p.silent = False
        p.log_end_offset = fetch_offset
        if log_start_offset != UNKNOWN_OFFSET:
            p.log_start_offset = log_start_offset
        if fetch_offset >= leader_end_offset:
            p.last_caught_up_ms = self.now_ms
        elif fetch_offset >= p.leader_end_at_last_fetch >= 0:
            p.last_caught_up_ms = max(p.last_caught_up_ms, p.last_fetch_ms)
        p.last_fetch_ms = self.now_ms
        p.leader_end_at_last_fetch = leader_end_offset
        return self.update_high_watermark(leader_end_offset)

    def low_watermark(self, leader_log_start_offset: int) -> int:
        """The smallest log start over the maximal ISR (-1 while an in-sync follower has
        not reported one): a DeleteRecords is done, and survives any election, once this
        has reached its offset."""
        low = leader_log_start_offset
        for replica in self.maximal_isr:
            if replica == self.node_id:
                continue
            p = self.followers.get(replica)
            if p is None or p.log_start_offset == UNKNOWN_OFFSET:
                return UNKNOWN_OFFSET
            low = min(low, p.log_start_offset)
        return low

    def update_high_watermark(self, leader_end_offset: int) -> bool:
        """Recompute from the maximal ISR; returns whether it advanced."""
        candidate = leader_end_offset
        for replica in self.maximal_isr:
            if replica == self.node_id:
                continue
            p = self.followers.get(replica)
            if p is None or p.log_end_offset == UNKNOWN_OFFSET:
                return False  # an in-sync follower this leader has not heard from yet
            candidate = min(candidate, p.log_end_offset)
        if candidate > self.high_watermark:
            self.high_watermark = candidate
            return True
        return False
