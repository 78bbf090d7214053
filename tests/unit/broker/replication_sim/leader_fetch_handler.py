"""The leader's answer to a follower fetch: epoch fencing, the divergence check, reading
records, and holding an empty fetch in a long poll until records come or it expires.

Why a module of its own: it is the copy of handlers/replica_fetch.py (with the long poll of
handlers/fetch.py), where a follower's progress reaches :class:`LeaderState`; the broken
variants (:class:`~.broken_variants.Bug`) break it here.
"""

from __future__ import annotations

from rillet.wire.error_codes import ErrorCode

from .broken_variants import Bug
from .broker_process import BrokerProcess
from .in_flight import ParkedFetch
from .messages import FetchReq, FetchResp
from .partition_log import Batch
from .replica import ReplicaModel


class LeaderFetchHandler(BrokerProcess):
    """The leader's half of replication: handlers/replica_fetch.py, with the long poll of
    handlers/fetch.py."""

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


def _epoch_error(replica: ReplicaModel, follower_epoch: int) -> ErrorCode | None:
    """replica_fetch._epoch_error."""
    if follower_epoch < 0:
        return None
    if follower_epoch < replica.leader_epoch:
        return ErrorCode.FENCED_LEADER_EPOCH
    if follower_epoch > replica.leader_epoch:
        return ErrorCode.UNKNOWN_LEADER_EPOCH
    return None
