"""A broker-only node's view of the metadata log: fetched from the voters.

Implements what :class:`~rillet.metadata_quorum.follower.MetadataFollower` reads
(``read_committed``, snapshots) over the MetadataFetch api. When a voter has compacted the
log past the requested index it answers with its whole state instead; that becomes this
node's latest snapshot and the follower restores from it.
"""

from __future__ import annotations

import logging

import trio

from rillet.broker.cluster.cluster_auth import ClusterAuth
from rillet.broker.cluster.controller_link import ControllerLink
from rillet.broker.errors import ControllerUnreachable
from rillet.raft.errors import SnapshotRequired
from rillet.raft.quorum import Entry, Snapshot
from rillet.wire.cluster_messages import MetadataFetchRequest, MetadataFetchResponse
from rillet.wire.error_codes import ErrorCode

log = logging.getLogger(__name__)

LONG_POLL_MS = 1_000
RETRY_S = 0.2


class RemoteMetadataLog:
    def __init__(self, link: ControllerLink, auth: ClusterAuth, request_timeout_s: float) -> None:
        self._link = link
        self._auth = auth
        self._timeout_s = request_timeout_s + LONG_POLL_MS / 1000
        self._snapshot: Snapshot | None = None

    async def read_committed(self, after_index: int, max_entries: int = 1000) -> list[Entry]:
        request = MetadataFetchRequest(
            self._auth.cluster_id, self._auth.token, after_index, max_entries, LONG_POLL_MS
        )
        while True:
            try:
                response: MetadataFetchResponse = await self._link.call(request, self._timeout_s)
            except ControllerUnreachable as exc:
                log.warning("metadata fetch failed: %s", exc)
                continue
            if response.error_code != ErrorCode.NONE:
                log.warning(
                    "metadata fetch refused: %s %s",
                    ErrorCode(response.error_code).name,
                    response.error_message or "",
                )
                await trio.sleep(RETRY_S)
                continue
            if response.snapshot is not None:
                self._snapshot = Snapshot(
                    response.snapshot_index, response.snapshot_term, response.snapshot
                )
                raise SnapshotRequired(response.snapshot_index)
            if response.entries:
                return [Entry(e.index, e.term, e.data) for e in response.entries]

    def save_snapshot(self, snapshot: Snapshot) -> None:
        """Nothing to compact here: the voters own the log."""

    def latest_snapshot(self) -> Snapshot | None:
        return self._snapshot
