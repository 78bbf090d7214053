"""Decoding a large request (and building its answer) in a worker thread, so the event loop
keeps running.

Everything on a node shares one trio loop: decoding a 31 MiB Metadata request on it held
the loop for seconds (heartbeats, Raft and every other client waited, and the broker's
session could expire). A body of ``request_decode_offload_bytes`` or more is decoded in a
worker thread instead, at most ``request_decode_threads`` at once node-wide; the loop then
runs between the thread's turns of the interpreter lock (every few milliseconds). The Kafka
listener builds and encodes the answer to such a request in a worker thread too (a Metadata
request naming a million topics has an answer naming them all). Smaller bodies decode in
place: a thread hop costs more than their decoding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import trio

T = TypeVar("T")

DEFAULT_OFFLOAD_BYTES = 1024 * 1024
DEFAULT_THREADS = 2


class DecodeOffload:
    """Where a body of a given size is decoded: in place, or in a bounded worker pool."""

    def __init__(
        self, threshold_bytes: int = DEFAULT_OFFLOAD_BYTES, threads: int = DEFAULT_THREADS
    ) -> None:
        self.threshold_bytes = threshold_bytes
        self._limiter = trio.CapacityLimiter(threads)

    def offloaded(self, size_bytes: int) -> bool:
        return size_bytes >= self.threshold_bytes

    async def run(self, size_bytes: int, decode: Callable[[], T]) -> T:
        """``decode()``'s result (or exception): in place for a small body, else in a
        worker thread once one of the pool's slots is free."""
        if not self.offloaded(size_bytes):
            return decode()
        return await trio.to_thread.run_sync(decode, limiter=self._limiter)
