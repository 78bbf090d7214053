"""The timings and fault rates of one run, drawn from its seed.

Why a module of its own: what varies between seeds (how lossy, how slow, how often the
nemesis strikes, how strict min.insync.replicas is) is the knob a reader turns first when a
seed fails; it should be found in one place, apart from the machinery that uses it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from rillet.partition_store.config import LogConfig


@dataclass(slots=True)
class SimConfig:
    """Timings (virtual ms) scaled down from the defaults so that a run of a few virtual
    seconds sees many leader changes; the ratios between them are what matters."""

    fault_ms: int = 6_000  # faults and new writes happen only before this
    heal_limit_ms: int = 15_000  # after healing, quiescence must come within this
    loss: float = 0.05
    duplication: float = 0.02
    delay_mean_ms: float = 3.0
    delay_spike: float = 0.02  # chance of a 20-200 ms delay (reordering, timeouts)
    nemesis_every_ms: tuple[int, int] = (120, 450)
    min_insync_replicas: int = 2
    session_timeout_ms: int = 400
    heartbeat_ms: int = 80
    lag_max_ms: int = 300
    disconnect_grace_ms: int = 100
    isr_check_ms: int = 50
    fetch_wait_ms: int = 60
    fetch_backoff_ms: int = 10
    request_timeout_ms: int = 200  # a call's deadline (the node's quorum request timeout)
    # The controller link's per-attempt timeout: the node uses the request timeout for both
    # (then an unanswered attempt uses up the call); shorter, the call moves on to another
    # voter within its deadline.
    attempt_timeout_ms: int = 200
    produce_timeout_ms: int = 250
    metadata_wait_ms: int = 150
    controller_tick_ms: int = 60
    checkpoint_ms: int = 150
    fetch_max_bytes: int = 400  # a follower fetch's partition_max_bytes (a few batches)
    flush_check_ms: int = 30  # the flush task's period (flush_ms is checked then)
    fsync_ms: int = 5  # how long one flush plan takes to run
    # The topic's flush policy: -1/-1 relies on the page cache (the default); otherwise
    # the leader counts only fsynced records towards the high watermark.
    flush_messages: int = -1
    flush_ms: int = -1
    segment_bytes: int = 2048  # small: rolls, sealed segments and their indexes are exercised
    producer_in_flight: int = 3
    producer_tick_ms: int = 15
    consumer_every_ms: int = 40

    @classmethod
    def for_seed(cls, rng: random.Random, store_rng: random.Random) -> SimConfig:
        """Vary the environment with the seed, so the sweep covers calm and rough runs;
        the log's settings come from their own stream (``store_rng``), so adding one does
        not change the rest of a seed's run."""
        return cls(
            loss=rng.choice([0.0, 0.02, 0.05, 0.1, 0.2]),
            duplication=rng.choice([0.0, 0.01, 0.05]),
            delay_mean_ms=rng.choice([1.0, 3.0, 8.0]),
            delay_spike=rng.choice([0.0, 0.02, 0.05]),
            min_insync_replicas=rng.choice([1, 2, 2]),
            nemesis_every_ms=rng.choice([(80, 300), (120, 450), (300, 900)]),
            session_timeout_ms=rng.choice([250, 400, 800]),
            lag_max_ms=rng.choice([150, 300, 600]),
            fetch_wait_ms=rng.choice([20, 60, 120]),
            fetch_max_bytes=store_rng.choice([150, 400, 4000]),
            fsync_ms=store_rng.choice([1, 5, 20]),
            flush_messages=store_rng.choice([-1, -1, -1, 1, 8]),
            flush_ms=store_rng.choice([-1, -1, 0, 40]),
            segment_bytes=store_rng.choice([1024, 4096, 1 << 20]),
            attempt_timeout_ms=rng.choice([60, 120, 200]),
        )

    def log_config(self) -> LogConfig:
        return LogConfig(
            segment_bytes=self.segment_bytes,
            flush_messages=self.flush_messages,
            flush_ms=self.flush_ms,
            index_interval_bytes=256,
        )
