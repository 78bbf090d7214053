"""A request a handler will not treat now, answered with one top-level error.

Per-partition and per-topic errors live in a response's body; this is for a node that cannot
answer the request at all yet (its metadata not caught up after a start): the client gets a
retriable code and the reason, and asks again (another node, or later).
"""

from __future__ import annotations

from dataclasses import dataclass

from rillet.wire.error_codes import ErrorCode


@dataclass(frozen=True, slots=True)
class Refused:
    error: ErrorCode
    message: str
