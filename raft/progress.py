"""The leader's record of each follower: how much of the log matches, what to send next, and
how hard to push.

A follower is in one of three states (as in etcd-raft):

* PROBE: we do not know where its log matches ours. Send one append at a time and wait for
  the answer (or the next heartbeat round) before sending another, walking ``next_index``
  back on rejections using the follower's hints.
* REPLICATE: the logs match up to ``match_index``. Stream appends optimistically, advancing
  ``next_index`` on send, bounded by an inflight window (messages and bytes) so that a slow
  follower cannot make the leader buffer without limit.
* SNAPSHOT: the follower needs entries we compacted away; an InstallSnapshot is on its way.
  Send nothing else until it is acknowledged, or until it times out and we probe again (a
  snapshot lost on the network must not wedge the follower forever).

The tracker also counts votes and computes the quorum's commit index over the voters of the
configuration in effect; observers are replicated to but never counted.
"""

from __future__ import annotations

from collections import deque
from enum import Enum


class ProgressState(Enum):
    PROBE = "probe"
    REPLICATE = "replicate"
    SNAPSHOT = "snapshot"


class Inflights:
    """Appends sent but not yet acknowledged, as (last index, bytes), oldest first."""

    def __init__(self, max_messages: int, max_bytes: int | None) -> None:
        self.max_messages = max_messages
        self.max_bytes = max_bytes
        self._items: deque[tuple[int, int]] = deque()
        self.total_bytes = 0

    def __len__(self) -> int:
        return len(self._items)

    def add(self, last_index: int, size_bytes: int) -> None:
        self._items.append((last_index, size_bytes))
        self.total_bytes += size_bytes

    def free_le(self, index: int) -> None:
        """Forget every append acknowledged by an ack of ``index``."""
        while self._items and self._items[0][0] <= index:
            self.total_bytes -= self._items.popleft()[1]

    def free_first_one(self) -> None:
        if self._items:
            self.total_bytes -= self._items.popleft()[1]

    def full(self) -> bool:
        if len(self._items) >= self.max_messages:
            return True
        return self.max_bytes is not None and self.total_bytes >= self.max_bytes

    def reset(self) -> None:
        self._items.clear()
        self.total_bytes = 0


class Progress:
    def __init__(self, next_index: int, max_inflight_messages: int, max_inflight_bytes: int | None):
        self.match_index = 0
        self.next_index = next_index
        self.state = ProgressState.PROBE
        # PROBE: an append is outstanding, wait for its answer or the next heartbeat reply.
        self.probe_sent = False
        self.pending_snapshot_index = 0
        self.snapshot_elapsed_ticks = 0
        # Heard from since the last check-quorum round (a snapshot waits for it).
        self.recent_active = False
        # Leader ticks since this voter was last heard from (check-quorum's sliding window).
        self.quiet_ticks = 0
        self.inflights = Inflights(max_inflight_messages, max_inflight_bytes)

    def heard(self) -> None:
        """A message from this voter reached the leader."""
        self.recent_active = True
        self.quiet_ticks = 0

    def _reset_state(self, state: ProgressState) -> None:
        self.state = state
        self.probe_sent = False
        self.pending_snapshot_index = 0
        self.snapshot_elapsed_ticks = 0
        self.inflights.reset()

    def become_probe(self) -> None:
        if self.state is ProgressState.SNAPSHOT:
            # The snapshot may have arrived: probe right after it rather than at match+1.
            pending = self.pending_snapshot_index
            self._reset_state(ProgressState.PROBE)
            self.next_index = max(self.match_index + 1, pending + 1)
        else:
            self._reset_state(ProgressState.PROBE)
            self.next_index = self.match_index + 1

    def become_replicate(self) -> None:
        self._reset_state(ProgressState.REPLICATE)
        self.next_index = self.match_index + 1

    def become_snapshot(self, snapshot_index: int) -> None:
        self._reset_state(ProgressState.SNAPSHOT)
        self.pending_snapshot_index = snapshot_index

    def maybe_update(self, index: int) -> bool:
        """An acknowledgement of ``index``; False when it tells us nothing new (stale or
        duplicate), which is what makes reordered and repeated acks harmless."""
        updated = index > self.match_index
        if updated:
            self.match_index = index
            self.probe_sent = False
        self.next_index = max(self.next_index, index + 1)
        return updated

    def sent_entries(self, last_index: int, size_bytes: int) -> None:
        if self.state is ProgressState.REPLICATE:
            self.next_index = last_index + 1
            self.inflights.add(last_index, size_bytes)
        elif self.state is ProgressState.PROBE:
            self.probe_sent = True

    def maybe_decrease_to(self, rejected: int, match_hint: int) -> bool:
        """A rejection of the append after ``rejected``; False when it is stale (it answers
        a probe we already moved past). ``match_hint`` is where the logs may agree."""
        if self.state is ProgressState.REPLICATE:
            if rejected <= self.match_index:
                return False
            self.next_index = self.match_index + 1
            return True
        if self.next_index - 1 != rejected or rejected <= self.match_index:
            # Stale: it answers an older probe, or denies what the follower already
            # acknowledged (only a follower that lost synced data does that; probing the
            # same index again would loop at network speed).
            return False
        self.next_index = max(min(rejected, match_hint + 1), self.match_index + 1)
        self.probe_sent = False
        return True

    def is_paused(self) -> bool:
        if self.state is ProgressState.PROBE:
            return self.probe_sent
        if self.state is ProgressState.REPLICATE:
            return self.inflights.full()
        return True

    def describe(self) -> str:
        return (
            f"{self.state.value} match={self.match_index} next={self.next_index}"
            + (f" inflight={len(self.inflights)}" if self.inflights else "")
            + (f" snapshot={self.pending_snapshot_index}" if self.pending_snapshot_index else "")
        )


class VoteResult(Enum):
    PENDING = "pending"
    WON = "won"
    LOST = "lost"


class ProgressTracker:
    """Progress of every replica the leader sends to (voters, including the leader itself,
    and observers) and the votes of a campaign. Only voters count toward a quorum."""

    def __init__(self, voters: frozenset[int], observers: frozenset[int] = frozenset()) -> None:
        self.voters = voters
        self.observers = observers - voters
        self.quorum_size = len(voters) // 2 + 1
        self.progress: dict[int, Progress] = {}
        self.votes: dict[int, bool] = {}

    def members(self) -> list[int]:
        return sorted(self.voters | self.observers)

    def reset(
        self, next_index: int, max_inflight_messages: int, max_inflight_bytes: int | None
    ) -> None:
        self.progress = {
            node: Progress(next_index, max_inflight_messages, max_inflight_bytes)
            for node in self.members()
        }
        self.votes = {}

    def set_members(
        self,
        voters: frozenset[int],
        observers: frozenset[int],
        next_index: int,
        max_inflight_messages: int,
        max_inflight_bytes: int | None,
    ) -> None:
        """A new configuration (or observer set): keep the progress of replicas that stay,
        start new ones probing at ``next_index``, forget the ones that left."""
        self.voters = voters
        self.observers = observers - voters
        self.quorum_size = len(voters) // 2 + 1
        members = self.members()
        self.progress = {
            node: self.progress.get(node)
            or Progress(next_index, max_inflight_messages, max_inflight_bytes)
            for node in members
        }

    def committed_index(self) -> int:
        """The largest index held by a quorum of voters."""
        matches = sorted(
            (p.match_index for v, p in self.progress.items() if v in self.voters), reverse=True
        )
        return matches[self.quorum_size - 1] if len(matches) >= self.quorum_size else 0

    def record_vote(self, voter: int, granted: bool) -> None:
        self.votes.setdefault(voter, granted)  # the first answer counts; duplicates do not

    def tally(self) -> VoteResult:
        counted = {v: g for v, g in self.votes.items() if v in self.voters}
        granted = sum(1 for g in counted.values() if g)
        rejected = len(counted) - granted
        if granted >= self.quorum_size:
            return VoteResult.WON
        if rejected > len(self.voters) - self.quorum_size:
            return VoteResult.LOST
        return VoteResult.PENDING

    def quorum_heard_within(self, self_id: int, ticks: int) -> bool:
        """Has a quorum of voters (counting ourselves if we vote) been heard from within
        the last ``ticks``? Each call is a tick: every other replica's quiet time grows by
        one first."""
        heard = 0
        for node, p in self.progress.items():
            if node != self_id:
                p.quiet_ticks += 1
            if node in self.voters and (node == self_id or p.quiet_ticks < ticks):
                heard += 1
        return heard >= self.quorum_size

    def is_quorum(self, nodes: set[int]) -> bool:
        return len(nodes & self.voters) >= self.quorum_size
