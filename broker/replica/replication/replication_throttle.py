"""Replication throttles with Kafka's names and rule: pure state, times are arguments.

Kafka limits the bytes a reassignment copies with two broker rates,
``leader.replication.throttled.rate`` (bytes/s a leader sends to throttled followers) and
``follower.replication.throttled.rate`` (bytes/s a follower fetches for throttled replicas),
and two topic lists naming which replicas count: ``leader.replication.throttled.replicas``
and ``follower.replication.throttled.replicas``, each ``partition:broker,...`` or ``*`` (every
replica of the topic). A replica is throttled only while it is out of the ISR: once a moving
replica has caught up it replicates at full speed, and a replica that was always in sync is
never slowed, so ``acks=all`` writes never wait on a throttle (Kafka's rule).

The limit is a token bucket charged after the bytes arrived: a fetch that returns more than
the bucket holds leaves it in debt, and throttled partitions sit out fetches until the debt
is paid back. Each fetch asks for a tenth of a second's worth of a throttled partition (the
leader sends no more than the bucket holds), so the copy flows evenly. There is no
per-record work, only one subtraction per answered partition, and the long-run rate is the
configured one whatever the batch sizes.
"""

from __future__ import annotations

from dataclasses import dataclass

LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
BROKER_THROTTLE_CONFIGS = (LEADER_RATE, FOLLOWER_RATE)
TOPIC_THROTTLE_CONFIGS = (LEADER_REPLICAS, FOLLOWER_REPLICAS)
# Kafka's default for both rates: Long.MAX_VALUE, i.e. no limit.
UNLIMITED_RATE = 9223372036854775807
# How much a bucket may save up, in seconds of its rate: an idle throttled replica may send
# one second's worth at once, then the rate holds.
BURST_S = 1.0
# A throttled partition's fetches carry at most 1/CHUNKS_PER_S seconds' worth each.
CHUNKS_PER_S = 10


class ThrottleConfigError(ValueError):
    """A throttle setting that is not in Kafka's form (the message says which and why)."""


def parse_rate(key: str, value: str) -> int:
    """A rate in bytes per second (at least 1)."""
    try:
        rate = int(value)
    except (TypeError, ValueError):
        raise ThrottleConfigError(f"{key} must be an integer (bytes per second)") from None
    if rate < 1:
        raise ThrottleConfigError(f"{key} must be at least 1 byte per second")
    return rate


@dataclass(frozen=True, slots=True)
class ThrottledReplicas:
    """One topic's list: every replica (``*``), or the named (partition, broker) pairs."""

    every: bool = False
    pairs: frozenset[tuple[int, int]] = frozenset()

    def covers(self, partition: int, broker_id: int) -> bool:
        return self.every or (partition, broker_id) in self.pairs


NONE_THROTTLED = ThrottledReplicas()


def parse_replicas(key: str, value: str) -> ThrottledReplicas:
    """Kafka's ``0:101,0:102,1:101`` or ``*`` (blank: none)."""
    text = value.strip()
    if text == "*":
        return ThrottledReplicas(every=True)
    pairs: set[tuple[int, int]] = set()
    for item in filter(None, (i.strip() for i in text.split(","))):
        partition, sep, broker = item.partition(":")
        if not sep or not partition.strip().isdigit() or not broker.strip().isdigit():
            raise ThrottleConfigError(
                f"{key}: expected partition:broker pairs like 0:1,1:2 or *, got {item!r}"
            )
        pairs.add((int(partition), int(broker)))
    return ThrottledReplicas(pairs=frozenset(pairs))


def normalised_replicas(key: str, value: str) -> str:
    """The list as stored: validated, pairs in order, no spaces."""
    parsed = parse_replicas(key, value)
    if parsed.every:
        return "*"
    return ",".join(f"{p}:{b}" for p, b in sorted(parsed.pairs))


def replicas_text(pairs: list[tuple[int, int]]) -> str:
    """Kafka's list form of ``pairs`` (for the tools that set throttles)."""
    return ",".join(f"{p}:{b}" for p, b in sorted(set(pairs)))


def is_throttled(lists: dict[str, str], key: str, partition: int, broker_id: int) -> bool:
    """Whether topic configs ``lists`` name this replica under ``key`` (a malformed value,
    which validation keeps out, names none)."""
    value = lists.get(key)
    if not value:
        return False
    try:
        return parse_replicas(key, value).covers(partition, broker_id)
    except ThrottleConfigError:
        return False


class TokenBucket:
    """Bytes per second with a burst of :data:`BURST_S` seconds, charged after the fact."""

    def __init__(self, rate_bytes_per_s: int, now_ms: int) -> None:
        self.rate_bytes_per_s = rate_bytes_per_s
        self._tokens = float(rate_bytes_per_s) * BURST_S
        self._at_ms = now_ms
        self.charged_bytes_total = 0

    def set_rate(self, rate_bytes_per_s: int, now_ms: int) -> None:
        """A new rate from now on (the tokens saved so far are capped at the new burst)."""
        self._refill(now_ms)
        self.rate_bytes_per_s = rate_bytes_per_s
        self._tokens = min(self._tokens, rate_bytes_per_s * BURST_S)

    def charge(self, n_bytes: int, now_ms: int) -> None:
        self._refill(now_ms)
        self._tokens -= n_bytes
        self.charged_bytes_total += n_bytes

    def available_bytes(self, now_ms: int) -> int:
        """What may go now without debt (0 while in debt)."""
        self._refill(now_ms)
        return max(0, int(self._tokens))

    def wait_ms(self, now_ms: int) -> int:
        """How long throttled traffic must pause before the bucket is out of debt (0: it may
        go now)."""
        self._refill(now_ms)
        if self._tokens >= 0:
            return 0
        return max(1, int(-self._tokens * 1000 / self.rate_bytes_per_s) + 1)

    def _refill(self, now_ms: int) -> None:
        elapsed_ms = max(0, now_ms - self._at_ms)
        self._at_ms = max(self._at_ms, now_ms)
        cap = self.rate_bytes_per_s * BURST_S
        self._tokens = min(cap, self._tokens + elapsed_ms * self.rate_bytes_per_s / 1000)


class ThrottleGate:
    """One broker's bucket for one direction, following the rate setting as it changes
    (None: unlimited, no bucket)."""

    def __init__(self) -> None:
        self.bucket: TokenBucket | None = None

    def follow(self, rate_bytes_per_s: int | None, now_ms: int) -> None:
        if rate_bytes_per_s is None or rate_bytes_per_s >= UNLIMITED_RATE:
            self.bucket = None
        elif self.bucket is None:
            self.bucket = TokenBucket(rate_bytes_per_s, now_ms)
        elif self.bucket.rate_bytes_per_s != rate_bytes_per_s:
            self.bucket.set_rate(rate_bytes_per_s, now_ms)

    def wait_ms(self, now_ms: int) -> int:
        return 0 if self.bucket is None else self.bucket.wait_ms(now_ms)

    def chunk_bytes(self, limit: int) -> int:
        """The most one fetch should carry of a throttled partition: a tenth of a second at
        the rate (so the bytes arrive smoothly, not a whole fetch at once then a long
        pause), never more than ``limit``."""
        if self.bucket is None:
            return limit
        return max(1, min(limit, self.bucket.rate_bytes_per_s // CHUNKS_PER_S))

    def charge(self, n_bytes: int, now_ms: int) -> None:
        if self.bucket is not None and n_bytes > 0:
            self.bucket.charge(n_bytes, now_ms)


def broker_rate(configs: dict[int, dict[str, str]], broker_id: int, key: str) -> int | None:
    """The rate in force on ``broker_id``: its own setting, else the cluster-wide default
    (broker id -1, Kafka's resource name ""), else none."""
    for source in (configs.get(broker_id), configs.get(-1)):
        if source and key in source:
            try:
                return parse_rate(key, source[key])
            except ThrottleConfigError:
                return None
    return None
