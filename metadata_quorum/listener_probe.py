"""Is anything listening on a broker's address? The new controller's quick liveness check.

A connection attempt answers in one of three ways: accepted (a process holds the port, even
one that is paused: the kernel completes the handshake), refused (no socket listens: the
process is gone or never bound), or no answer in time (a cut link or a lost host). Only a
refusal is proof that the broker does not serve; the other two prove nothing, and the
controller's lease deadlines decide for them.
"""

from __future__ import annotations

import errno

import trio

PROBE_TIMEOUT_S = 0.5
PROBE_INTERVAL_S = 0.25


def _is_refusal(exc: BaseException | None) -> bool:
    """Whether every attempt was refused (trio reports a failed connect as an OSError
    caused by a group of the attempts' errors)."""
    if exc is None:
        return False
    if isinstance(exc, ConnectionRefusedError) or (
        isinstance(exc, OSError) and exc.errno == errno.ECONNREFUSED
    ):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return all(_is_refusal(e) for e in exc.exceptions)
    return _is_refusal(exc.__cause__)


async def listener_refuses(host: str, port: int, timeout_s: float = PROBE_TIMEOUT_S) -> bool:
    """True when a TCP connection to ``host:port`` is refused within ``timeout_s``."""
    with trio.move_on_after(timeout_s):
        try:
            stream = await trio.open_tcp_stream(host, port)
        except OSError as exc:
            return _is_refusal(exc)
        await trio.aclose_forcefully(stream)
    return False
