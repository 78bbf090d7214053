"""Tuning of the Raft core, in ticks and counts (the core has no clock: the driver decides
how long a tick is, typically 50-100 ms).

Defaults follow etcd-raft's usual setting: heartbeat every tick, elections after 10-20 ticks.
"""

from __future__ import annotations

from dataclasses import dataclass

from rillet.raft.core_errors import CoreContractError


@dataclass(frozen=True, slots=True)
class Config:
    # A follower campaigns after a randomized timeout in [election, 2 * election) ticks
    # without hearing from a leader; a leader steps down (check-quorum) after this many
    # ticks without hearing from a quorum.
    election_timeout_ticks: int = 10
    heartbeat_interval_ticks: int = 1
    # Ask "would you vote for me?" before bumping the term, so a node that was cut off
    # cannot depose a healthy leader when it comes back.
    pre_vote: bool = True
    # Leaders step down without a quorum; followers that heard from a leader within an
    # election timeout ignore (pre-)vote requests (the leader's lease).
    check_quorum: bool = True
    # Batching: bounds of one AppendEntries message.
    max_append_entries: int = 256
    max_append_bytes: int = 1 << 20
    # Pipelining: appends in flight per follower before waiting for acks.
    max_inflight_appends: int = 64
    max_inflight_bytes: int | None = 16 << 20
    # A follower in snapshot state that has not acknowledged the snapshot after this many
    # ticks is probed again (0: twice the election timeout).
    snapshot_timeout_ticks: int = 0
    # Bound of the committed entries handed out in one Ready (None: no bound).
    max_apply_bytes: int | None = 64 << 20
    # A replica being added as a voter that has not caught up with the commit index after
    # this many ticks is given up on (0: ten election timeouts).
    catch_up_timeout_ticks: int = 0

    def __post_init__(self) -> None:
        if self.heartbeat_interval_ticks < 1:
            raise CoreContractError("heartbeat_interval_ticks must be >= 1")
        if self.election_timeout_ticks <= self.heartbeat_interval_ticks:
            raise CoreContractError("election_timeout_ticks must exceed the heartbeat interval")
        if self.max_append_entries < 1 or self.max_append_bytes < 1:
            raise CoreContractError("append batches must allow at least one entry")
        if self.max_inflight_appends < 1:
            raise CoreContractError("max_inflight_appends must be >= 1")
        if self.snapshot_timeout_ticks < 0:
            raise CoreContractError("snapshot_timeout_ticks must be >= 0")
        if self.catch_up_timeout_ticks < 0:
            raise CoreContractError("catch_up_timeout_ticks must be >= 0")

    def effective_snapshot_timeout_ticks(self) -> int:
        return self.snapshot_timeout_ticks or 2 * self.election_timeout_ticks

    def effective_catch_up_timeout_ticks(self) -> int:
        return self.catch_up_timeout_ticks or 10 * self.election_timeout_ticks
