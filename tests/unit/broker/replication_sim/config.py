"""The timings and fault rates of one run, drawn from its seed.

Why a module of its own: what varies between seeds (how lossy, how slow, how often the
nemesis strikes, how strict min.insync.replicas is) is the knob a reader turns first when a
seed fails; it should be found in one place, apart from the machinery that uses it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


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
    request_timeout_ms: int = 200
    produce_timeout_ms: int = 250
    metadata_wait_ms: int = 150
    controller_tick_ms: int = 60
    checkpoint_ms: int = 150
    max_batches_per_fetch: int = 4
    producer_in_flight: int = 3
    producer_tick_ms: int = 15
    consumer_every_ms: int = 40

    @classmethod
    def for_seed(cls, rng: random.Random) -> SimConfig:
        """Vary the environment with the seed, so the sweep covers calm and rough runs."""
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
        )
