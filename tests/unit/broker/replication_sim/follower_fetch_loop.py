"""The follower's fetch loop: one fetch in flight to the leader it believes in; the real
replica builds each request and applies each answer (append, follow the high watermark,
truncate on divergence, drop a stale answer).

Why a module of its own: it schedules what replication/replica_fetcher.py's loop does for
one leader, with the loop's own steps: :class:`FollowedPositions` says what to fetch,
:func:`apply_answer` what an answer does, and :class:`FetchRound` with :func:`next_fetch`
whether the loop fetches again at once or backs off (an unanswered fetch is a broken
round); what it adds is scheduling (one fetch in flight, its timeout, a new loop for a new
leader). The stats it counts prove the runs reach those paths.
"""

from __future__ import annotations

from rillet.broker.replica.replica_role import FetchApplied
from rillet.broker.replica.replication.fetch_round import FetchRound, RoundOutcome, next_fetch
from rillet.broker.replica.replication.followed_positions import FollowedPositions, SentPosition
from rillet.broker.replica.replication.follower_apply import apply_answer
from rillet.broker.replica.replication.follower_fetch_answer import is_diverging
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import FetchPartitionResponse

from .broker_process import BrokerProcess
from .messages import FetchReq, FetchResp
from .outcome import Violation


class FollowerFetchLoop(BrokerProcess):
    """The follower's half of replication (replication/replica_fetcher.py's loop for one
    leader), scheduled: one fetch in flight, built and applied by the real replica."""

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
        # The real loop's positions: what to ask for, and what the answer must still find.
        positions = FollowedPositions(self.sim.config.fetch_max_bytes)
        positions.rebuild([r], 0, self.sim.now)
        part = positions.positions[(r.key.topic, r.key.partition)]
        self.sent[req_id] = positions.sent[(r.key.topic, r.key.partition)]
        target = self.sim.brokers[leader]
        self.sim.send(self.node_id, leader, target.on_fetch, FetchReq(self.node_id, req_id, part))
        timeout = self.sim.config.request_timeout_ms + self.sim.config.fetch_wait_ms
        self.sim.later(self, timeout, self._fetch_timeout, req_id)

    def _fetch_timeout(self, req_id: int) -> None:
        if self.fetch_in_flight is not None and self.fetch_in_flight[0] == req_id:
            self.fetch_in_flight = None  # a broken connection
            self._round_ended(RoundOutcome.BROKEN)

    def on_fetch_response(self, resp: FetchResp) -> None:
        s = self.sent.get(resp.req_id)
        if s is None:
            return
        applied = self._apply(s, resp.answer)
        if self.fetch_in_flight is None or self.fetch_in_flight[0] != resp.req_id:
            return  # a duplicate, or the answer to a request already given up on
        self.fetch_in_flight = None
        self.sent.pop(resp.req_id, None)
        fetch_round = FetchRound(1)  # one partition answered
        fetch_round.applied(applied)
        self._round_ended(fetch_round.outcome)

    def _round_ended(self, outcome: RoundOutcome) -> None:
        """The loop's own step after a round: fetch again at once, or after a back-off (a
        new connection would be made then; here the next message simply goes)."""
        step = next_fetch(outcome, self.sim.config.fetch_backoff_ms / 1000)
        if step.wait_s is None:
            self.maybe_fetch()
        else:
            self.sim.later(self, round(step.wait_s * 1000), self.maybe_fetch)

    def _apply(self, s: SentPosition, answer: FetchPartitionResponse) -> FetchApplied:
        """ReplicaFetcherManager._apply: its own step (:func:`apply_answer`) on the replica
        the fetch was sent for; an answer for a replica since replaced (a crash) is stale."""
        r = self.replica
        if r is None or s.replica is not r:
            self.sim.stats["stale fetch answers dropped"] += 1
            return FetchApplied.STALE
        done = apply_answer(s, answer, self.sim.now)
        if done.refused is not None:  # a leader that sends what cannot follow this log
            raise Violation(f"{self}: follower append refused: {done.refused}")
        applied = done.applied
        if applied is FetchApplied.STALE:
            self.sim.stats["stale fetch answers dropped"] += 1
        elif applied is FetchApplied.TRUNCATED:
            if is_diverging(answer):
                self.sim.stats["divergence answers"] += 1
                self.sim.trace_line(
                    f"{self} diverged at {answer.diverging_epoch}/"
                    f"{answer.diverging_end_offset}: truncated to {r.log.log_end_offset}"
                )
            else:
                self.sim.stats[f"follower got {ErrorCode(answer.error_code).name}"] += 1
        elif applied is FetchApplied.BACK_OFF:
            self.sim.stats[f"follower got {ErrorCode(answer.error_code).name}"] += 1
        return done.applied
