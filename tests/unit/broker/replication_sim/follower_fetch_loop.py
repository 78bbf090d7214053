"""The follower's fetch loop: one fetch in flight to the leader it believes in, and the
use of the answer (append, follow the high watermark, truncate on divergence).

Why a module of its own: it is the copy of replication/replica_fetcher.py around the real
:mod:`follower_state` rules, and the place where stale answers must be recognised and
dropped; the stats it counts prove the runs reach those paths.
"""

from __future__ import annotations

from rillet.broker.replication.follower_state import (
    divergence_truncation_offset,
    plan_out_of_range,
)
from rillet.wire.error_codes import ErrorCode

from .broker_process import BrokerProcess
from .in_flight import SentFetch
from .messages import FetchReq, FetchResp
from .outcome import Violation


class FollowerFetchLoop(BrokerProcess):
    """The follower's half of replication: replication/replica_fetcher.py."""

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
