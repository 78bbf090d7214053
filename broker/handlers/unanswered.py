"""A request that gets no answer: an acks=0 produce.

The client reads nothing back, so a partition that failed is said here rather than in a
response: the Kafka listener closes such a connection (the client then refreshes its
metadata, as with Kafka); the native listener's clients do not expect that, and it keeps
the connection open.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Unanswered:
    """``failure``: which partitions failed and why (None: none did)."""

    failure: str | None = None
