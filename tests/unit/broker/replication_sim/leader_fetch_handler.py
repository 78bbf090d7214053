"""The leader's answer to a follower fetch, and the long poll that holds an empty one.

Why a module of its own: the answer is the real
:func:`~rillet.broker.replica.replication.follower_fetch_answer.answer_follower_fetch` on the real
replica (epoch fencing, the divergence check, the follower's progress reaching
:class:`LeaderState`, reads of the real log), and whether it goes now or is held is the
fetch handler's own :class:`LongPoll`; this part only schedules them, holds empty answers
until the replica wakes them (its real follower waiters) or the poll's deadline, and is
where the broken variants (:class:`~.broken_variants.Bug`) break the leader.
"""

from __future__ import annotations

import dataclasses
import os

import trio

from rillet.broker.replica.replication.follower_fetch_answer import (
    LongPoll,
    answer_if_hosted,
    answers_at_once,
)
from rillet.broker.replica.replication.replica_fetcher import FETCH_MIN_BYTES
from rillet.wire.batch import read_header
from rillet.wire.error_codes import ErrorCode
from rillet.wire.frame import FileRegion, blob_length

from .broken_variants import Bug
from .broker_process import BrokerProcess
from .in_flight import ParkedFetch
from .messages import FetchReq, FetchResp


class LeaderFetchHandler(BrokerProcess):
    """The leader's half of replication, scheduled: answer, or park until woken."""

    def on_fetch(self, req: FetchReq) -> None:
        poll = LongPoll((self.sim.now + self.sim.config.fetch_wait_ms) / 1000)
        self._serve_fetch(ParkedFetch(req, poll))

    def _serve_fetch(self, parked: ParkedFetch) -> None:
        resp = self.read_for_follower(parked.req)
        a = resp.answer
        # The handler's own long poll (handlers/fetch.py), for a one-partition fetch.
        now_s = self.sim.now / 1000
        done = parked.poll.ends(blob_length(a.records), FETCH_MIN_BYTES, answers_at_once(a), now_s)
        r = self.replica
        if done or r is None:
            follower = self.sim.brokers[parked.req.follower]
            self.sim.send(self.node_id, follower.node_id, follower.on_fetch_response, resp)
            return
        parked.woken = trio.Event()
        r.register_waiter(parked.woken, follower=True)
        self.parked.append(parked)
        deadline_ms = round(parked.poll.deadline_s * 1000)
        self.sim.later(self, deadline_ms - self.sim.now, self._fetch_deadline, parked)

    def _fetch_deadline(self, parked: ParkedFetch) -> None:
        if parked in self.parked:
            self.parked.remove(parked)
            self._forget(parked)
            self._serve_fetch(parked)

    def wake_parked_fetches(self) -> None:
        """Serve the parked fetches the replica woke (its log end moved, or it was
        deposed); run after every event, as trio would run the woken tasks."""
        woken = [p for p in self.parked if p.woken is not None and p.woken.is_set()]
        if not woken:
            return
        self.parked = [p for p in self.parked if p not in woken]
        for p in woken:
            self._serve_fetch(p)

    def _forget(self, parked: ParkedFetch) -> None:
        if self.replica is not None and parked.woken is not None:
            self.replica.unregister_waiter(parked.woken)

    def read_for_follower(self, req: FetchReq) -> FetchResp:
        r = self.replica
        p = req.partition
        bug = self.sim.bug
        if bug is Bug.NO_DIVERGENCE_CHECK and r is not None:
            p = dataclasses.replace(p, last_fetched_epoch=-1)
        # handlers/replica_fetch.py's step; the metadata of the one partition knows it.
        answer = answer_if_hosted(
            r, _known, p, req.follower, self.sim.now, self.sim.config.fetch_max_bytes, True, _copy
        )
        if r is None:
            return FetchResp(req.req_id, answer)
        if answer.error_code in (ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.UNKNOWN_LEADER_EPOCH):
            self.sim.stats[f"fetch answer {ErrorCode(answer.error_code).name}"] += 1
        if bug is Bug.EARLY_FOLLOWER_LEO and len(answer.records) > 0:
            r.on_follower_fetch(req.follower, _end_of(bytes(answer.records)), self.sim.now)
        return FetchResp(req.req_id, answer)


def _known() -> bool:
    return True


def _copy(region: FileRegion) -> bytes:
    """The records themselves (a node sends the region with sendfile instead)."""
    return os.pread(region.fd, region.length, region.position)


def _end_of(records: bytes) -> int:
    position, end = 0, 0
    while position < len(records):
        h = read_header(records, position)
        end = h.next_offset
        position += h.size
    return end
