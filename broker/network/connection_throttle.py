"""One connection's share of the byte-rate quotas: charge what it moved, mute it after.

The connection charges a produce request's bytes when it reads the request and a fetch
answer's bytes when it sends the answer; when the principal is over its quota, the
connection reads nothing more from the client until ``muted_until_s`` (Kafka's channel
mute). Connections authenticated as a cluster node (replica fetches, heartbeats) are never
throttled: the quota is for clients. Sans-I/O: times are arguments (the driver's clock is
trio's, so tests drive it with ``trio.testing.MockClock``).
"""

from __future__ import annotations

from rillet.broker.network.client_quotas import ClientQuotas, QuotaKind
from rillet.broker.security.session import Session
from rillet.wire.frame import BlobPart, blob_length


class ConnectionThrottle:
    def __init__(self, quotas: ClientQuotas | None, session: Session) -> None:
        self._quotas = quotas if quotas is not None and quotas.enabled else None
        self._session = session
        self.muted_until_s = 0.0  # read nothing from the client before this time
        self.throttled_ms_total = 0

    def charge(self, kind: QuotaKind, nbytes: int, now_s: float) -> int:
        """Charge ``nbytes`` at ``now_s``; the throttle time in ms it caused (0: within
        quota)."""
        if self._quotas is None or self._session.node_id is not None:
            return 0
        throttle_ms = self._quotas.record(self._session.principal, kind, nbytes, int(now_s * 1000))
        if throttle_ms:
            self.muted_until_s = max(self.muted_until_s, now_s + throttle_ms / 1000)
            self.throttled_ms_total += throttle_ms
        return throttle_ms

    def charge_parts(self, kind: QuotaKind, parts: list[BlobPart], now_s: float) -> int:
        if self._quotas is None:
            return 0
        return self.charge(kind, sum(blob_length(p) for p in parts), now_s)
