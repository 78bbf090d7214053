"""One read of the metadata log by a broker-only node, as a sequence of steps.

Why a core of its own: :class:`~rillet.broker.cluster.remote_metadata_log.RemoteMetadataLog`
sends each MetadataFetch over the controller link and the replication simulation (tests)
over a scheduled network; both run this object, so a read goes on in the same way in both:
a long poll for the committed entries after an index, with a deadline of the request
timeout plus the long poll; an unanswered fetch is sent again at once, a refused one after
``RETRY_S``, an empty answer (the long poll ran out) is sent again, and an answer with a
snapshot (the voter compacted its log past the index) ends the read with that snapshot.
It touches no socket, task or clock: the driver sends, sleeps and keeps the deadline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rillet.raft.quorum import Entry, Snapshot
from rillet.wire.error_codes import ErrorCode

# How long a voter holds a fetch that finds no new entry (the request's max wait).
LONG_POLL_MS = 1_000
# The wait before asking again after a refusal (an unknown cluster id or token, a voter
# that is shutting down).
RETRY_S = 0.2


@dataclass(frozen=True, slots=True)
class Fetch:
    """Send a MetadataFetch for the entries after ``after_index``; without an answer
    within ``timeout_s`` the fetch is unanswered."""

    after_index: int
    max_entries: int
    long_poll_ms: int
    timeout_s: float


@dataclass(frozen=True, slots=True)
class Wait:
    """The fetch was refused (``reason``, for the log): wait ``delay_s``, then fetch again."""

    delay_s: float
    reason: str


@dataclass(frozen=True, slots=True)
class Entries:
    """The read is over: apply these committed entries, in order."""

    entries: Sequence[Entry]


@dataclass(frozen=True, slots=True)
class SnapshotReady:
    """The read is over: the entries were compacted; restore this snapshot instead."""

    snapshot: Snapshot


Step = Fetch | Wait | Entries | SnapshotReady


class MetadataPoll:
    """The steps of one ``read_committed(after_index)``; each event returns what the driver
    does next."""

    def __init__(
        self,
        after_index: int,
        request_timeout_s: float,
        max_entries: int = 1000,
        long_poll_ms: int = LONG_POLL_MS,
    ) -> None:
        self._fetch = Fetch(
            after_index, max_entries, long_poll_ms, request_timeout_s + long_poll_ms / 1000
        )

    def fetch(self) -> Fetch:
        """The (next) fetch: the first, or the one after a wait."""
        return self._fetch

    def unanswered(self) -> Fetch:
        """No answer within the timeout (no controller reachable, a lost answer): again."""
        return self._fetch

    def answered(
        self,
        error_code: int,
        entries: Sequence[Entry],
        snapshot: Snapshot | None,
        error_message: str = "",
    ) -> Step:
        """A voter answered the fetch."""
        if error_code != ErrorCode.NONE:
            return Wait(RETRY_S, f"{ErrorCode(error_code).name} {error_message}".rstrip())
        if snapshot is not None:
            return SnapshotReady(snapshot)
        if entries:
            return Entries(entries)
        return self._fetch  # the long poll ran out: ask again
