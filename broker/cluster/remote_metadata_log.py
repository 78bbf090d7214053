"""A broker-only node's view of the metadata log: fetched from the voters.

Implements what :class:`~rillet.metadata_quorum.follower.MetadataFollower` reads
(``read_committed``, snapshots) over the MetadataFetch api. When a voter has compacted the
log past the requested index it answers with its whole state instead; that becomes this
node's latest snapshot and the follower restores from it. When to fetch, wait or stop is
:class:`~rillet.broker.cluster.metadata_poll.MetadataPoll`'s decision (the replication
simulation runs it too); this driver sends the fetches.
"""

from __future__ import annotations

import logging

import trio

from rillet.broker.cluster.cluster_auth import ClusterAuth
from rillet.broker.cluster.controller_link import ControllerLink
from rillet.broker.cluster.metadata_poll import (
    Fetch,
    MetadataPoll,
    SnapshotReady,
    Step,
    Wait,
)
from rillet.broker.errors import ControllerUnreachable
from rillet.raft.errors import SnapshotRequired
from rillet.raft.quorum import Entry, Snapshot
from rillet.wire.cluster_messages import MetadataFetchRequest, MetadataFetchResponse

log = logging.getLogger(__name__)


class RemoteMetadataLog:
    """Runs the steps :class:`~rillet.broker.cluster.metadata_poll.MetadataPoll` decides
    (what to fetch, when to wait, when the read is over) over the controller link."""

    def __init__(self, link: ControllerLink, auth: ClusterAuth, request_timeout_s: float) -> None:
        self._link = link
        self._auth = auth
        self._request_timeout_s = request_timeout_s
        self._snapshot: Snapshot | None = None

    async def read_committed(self, after_index: int, max_entries: int = 1000) -> list[Entry]:
        poll = MetadataPoll(after_index, self._request_timeout_s, max_entries)
        step: Step = poll.fetch()
        while True:
            if isinstance(step, Fetch):
                request = MetadataFetchRequest(
                    self._auth.cluster_id,
                    self._auth.token,
                    step.after_index,
                    step.max_entries,
                    step.long_poll_ms,
                )
                try:
                    response: MetadataFetchResponse = await self._link.call(request, step.timeout_s)
                except ControllerUnreachable as exc:
                    log.warning("metadata fetch failed: %s", exc)
                    step = poll.unanswered()
                    continue
                snapshot = None
                if response.snapshot is not None:
                    snapshot = Snapshot(
                        response.snapshot_index, response.snapshot_term, response.snapshot
                    )
                entries = [Entry(e.index, e.term, e.data) for e in response.entries]
                step = poll.answered(
                    response.error_code, entries, snapshot, response.error_message or ""
                )
            elif isinstance(step, Wait):
                log.warning("metadata fetch refused: %s", step.reason)
                await trio.sleep(step.delay_s)
                step = poll.fetch()
            elif isinstance(step, SnapshotReady):
                self._snapshot = step.snapshot
                raise SnapshotRequired(step.snapshot.index)
            else:
                return list(step.entries)

    def save_snapshot(self, snapshot: Snapshot) -> None:
        """Nothing to compact here: the voters own the log."""

    def latest_snapshot(self) -> Snapshot | None:
        return self._snapshot
