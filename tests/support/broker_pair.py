"""One side of a differential comparison: a broker that Kafka clients can reach."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Broker:
    """Its name ("kafka" or "rillet"), its bootstrap servers and its topics' replication."""

    name: str
    bootstrap: str
    replication_factor: int
    log_tail: Callable[[], str]  # for failure messages
