"""The broker's metadata follower: long-polls the committed metadata log and applies it.

Why a module of its own: a read of the log is the broker's own
:class:`~rillet.broker.cluster.metadata_poll.MetadataPoll` (RemoteMetadataLog's steps: the
long poll and its timeout, again at once when unanswered, after ``RETRY_S`` when refused,
a snapshot instead of compacted entries), and what is done with the entries read is
:class:`~rillet.metadata_quorum.follower_progress.FollowerProgress` (MetadataFollower's:
where the next read starts, apply in order, restore a snapshot). This part executes their
steps as events: a ``Fetch`` becomes a message to the controller and a timer for its
timeout, a ``Wait`` a timer; after each read it wakes what waits for applied entries (the
membership's catch-up and the partition reconciler), as the follower wakes its waiters.
"""

from __future__ import annotations

from rillet.broker.cluster.metadata_poll import (
    Entries,
    Fetch,
    MetadataPoll,
    SnapshotReady,
    Step,
    Wait,
)
from rillet.raft.quorum import Entry
from rillet.wire.cluster_messages import MetadataFetchRequest, MetadataFetchResponse

from .broker_process import BrokerProcess
from .messages import ControllerReq, ControllerResp
from .topology import CLUSTER_ID, CONTROLLER


class MetadataFollowerLoop(BrokerProcess):
    """MetadataFollower.run over RemoteMetadataLog.read_committed, scheduled: one read at a
    time, one fetch of it in flight."""

    def poll_metadata(self) -> None:
        """The follower's next read, after the last applied entry."""
        # The simulated controller holds a fetch for metadata_wait_ms (its long poll).
        self.md_poll = self.sim.poll_type(
            self.followed.read_after(),
            self.sim.config.request_timeout_ms / 1000,
            long_poll_ms=self.sim.config.metadata_wait_ms,
        )
        self._md_step(self.md_poll.fetch())

    def _md_step(self, step: Step) -> None:
        """Do what the read asks for next."""
        if isinstance(step, Fetch):
            req_id = self.sim.next_id()
            self.md_in_flight = req_id
            wait_ms = self.sim.config.metadata_wait_ms
            request = MetadataFetchRequest(CLUSTER_ID, b"", step.after_index, 1000, wait_ms)
            req = ControllerReq(self.node_id, req_id, request)
            self.sim.send(self.node_id, CONTROLLER, self.sim.controller.on_request, req)
            self.sim.later(self, round(step.timeout_s * 1000), self._metadata_timeout, req_id)
        elif isinstance(step, Wait):
            poll = self.md_poll
            self.sim.later(self, round(step.delay_s * 1000), self._fetch_again, poll)
        elif isinstance(step, SnapshotReady):
            self.followed.restore(step.snapshot)
            self._read_done()
        else:
            self._apply_read(step)

    def _fetch_again(self, poll: MetadataPoll | None) -> None:
        if poll is self.md_poll and poll is not None:
            self._md_step(poll.fetch())

    def _metadata_timeout(self, req_id: int) -> None:
        if self.md_in_flight == req_id and self.md_poll is not None:
            self.md_in_flight = None
            self._md_step(self.md_poll.unanswered())

    def metadata_answered(self, resp: ControllerResp) -> None:
        """A voter's answer (a duplicate, or one to a fetch given up on, is dropped)."""
        if resp.req_id != self.md_in_flight or self.md_poll is None:
            return
        answer = resp.response
        assert isinstance(answer, MetadataFetchResponse)
        self.md_in_flight = None
        # The broker's follower hands no snapshot to its remote log (only voters compact),
        # so none is read.
        entries = [Entry(e.index, e.term, e.data) for e in answer.entries]
        self._md_step(self.md_poll.answered(answer.error_code, entries, None))

    def _apply_read(self, read: Entries) -> None:
        for entry in read.entries:
            self.followed.apply(entry)
        self.followed.applied(read.entries)  # a snapshot would go to the remote log: dropped
        self._read_done()

    def _read_done(self) -> None:
        """The follower wakes its waiters, then reads again."""
        self.md_poll = None
        self.metadata_woke()
        self.poll_metadata()
