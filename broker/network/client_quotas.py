"""Byte-rate quotas per principal: how long a client must wait before its next request.

Sans-I/O: callers pass the bytes a request took or a response gave and the time in
milliseconds; the meter answers the throttle time. Each principal has a token bucket per
direction (produce, fetch) holding at most ``window_ms`` worth of its rate, so a client may
burst that much and then averages its quota. A request that drives the bucket below zero is
still served (it was already read; refusing it would waste the work and the client would
only resend it); the connection then reads nothing more from the client until the debt is
paid, and Kafka clients also learn the wait from ``throttle_time_ms``. This is how Kafka
throttles too (the response is sent, the channel is muted), with a token bucket in place of
Kafka's sampled rate: the same average, and no sample windows to tune.

Buckets are node-wide, so a principal's connections to one node share its quota (in Kafka a
quota is also per broker). Unauthenticated clients are all ``User:ANONYMOUS`` and share one
bucket, as in Kafka. At most ``MAX_TRACKED_PRINCIPALS`` buckets are kept; the least recently
used is forgotten first (a forgotten principal starts again with a full bucket).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass
from enum import Enum

from rillet.broker.config.quota_config import QuotasConfig

MAX_TRACKED_PRINCIPALS = 10_000


class QuotaKind(Enum):
    PRODUCE = "producer_byte_rate"
    FETCH = "consumer_byte_rate"


@dataclass(frozen=True, slots=True)
class ByteRates:
    """Bytes per second a principal may produce and fetch; 0 means unlimited."""

    producer_byte_rate: int = 0
    consumer_byte_rate: int = 0

    def of(self, kind: QuotaKind) -> int:
        return self.producer_byte_rate if kind is QuotaKind.PRODUCE else self.consumer_byte_rate


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated_ms: int


class ClientQuotas:
    """The node's quota meters: rates by principal (an override, else the default)."""

    def __init__(
        self,
        default: ByteRates,
        overrides: dict[str, ByteRates] | None = None,
        window_ms: int = 1_000,
    ) -> None:
        if window_ms < 1:
            raise ValueError(f"window_ms must be >= 1, not {window_ms}")
        self._default = default
        self._overrides = dict(overrides or {})
        self._window_ms = window_ms
        self._buckets: OrderedDict[tuple[str, QuotaKind], _Bucket] = OrderedDict()

    @classmethod
    def from_config(cls, config: QuotasConfig) -> ClientQuotas:
        """The meters of the ``[quotas]`` section (its rates the default, its users' the
        overrides)."""
        return cls(
            ByteRates(config.producer_byte_rate, config.consumer_byte_rate),
            {
                u.principal: ByteRates(u.producer_byte_rate, u.consumer_byte_rate)
                for u in config.users
            },
            config.quota_window_ms,
        )

    @property
    def enabled(self) -> bool:
        rates = [self._default, *self._overrides.values()]
        return any(r.producer_byte_rate or r.consumer_byte_rate for r in rates)

    def rate_of(self, principal: str, kind: QuotaKind) -> int:
        return self._overrides.get(principal, self._default).of(kind)

    def record(self, principal: str, kind: QuotaKind, nbytes: int, now_ms: int) -> int:
        """Charge ``nbytes`` to the principal; the milliseconds it must now wait (0: none)."""
        rate = self.rate_of(principal, kind)
        if rate <= 0:
            return 0
        capacity = rate * self._window_ms / 1000.0
        key = (principal, kind)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(capacity, now_ms)
            while len(self._buckets) > MAX_TRACKED_PRINCIPALS:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
            elapsed_ms = max(0, now_ms - bucket.updated_ms)
            bucket.tokens = min(capacity, bucket.tokens + rate * elapsed_ms / 1000.0)
            bucket.updated_ms = max(bucket.updated_ms, now_ms)
        bucket.tokens -= nbytes
        if bucket.tokens >= 0:
            return 0
        return math.ceil(-bucket.tokens * 1000.0 / rate)
