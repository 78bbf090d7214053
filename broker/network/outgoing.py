"""A connection's answers on their way out, whichever listener's framing they take.

The connection protocol (broker/network/connection_protocol.py) turns each request into an
:class:`Outgoing`: frame parts ready now, or a dispatcher reply still to finish (a long-poll
fetch, an acks=all produce). The reply writer (broker/network/reply_writer.py) turns it into frame
parts with the request's :class:`Encoder`, which is the front end's: the native listener
encodes internal messages as they are, the Kafka listener translates them to its api and
version first. An answer to a large request is built in a worker thread (``offload``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import partial
from typing import Protocol

from rillet.broker.dispatcher import PendingReply
from rillet.broker.network.decode_offload import DecodeOffload
from rillet.wire.error_codes import ErrorCode
from rillet.wire.frame import BlobPart

log = logging.getLogger(__name__)


class Encoder(Protocol):
    """How one request's answer becomes frame parts. ``throttle_ms``: the produce quota's
    wait the request caused, for a front end whose answers tell the client."""

    def answer(self, correlation_id: int, message: object, throttle_ms: int) -> list[BlobPart]:
        """The parts of the internal ``message`` (a response to the request)."""
        ...

    def error(
        self, correlation_id: int, code: ErrorCode, message: str | None, throttle_ms: int
    ) -> list[BlobPart]:
        """The parts of a top-level error instead of an answer."""
        ...


@dataclass(slots=True)
class Outgoing:
    """An answer in request order: ``parts`` ready now, or ``pending`` to finish first.
    ``fetch_quota``: its bytes are charged to the fetch quota as they are sent."""

    correlation_id: int
    encoder: Encoder
    parts: list[BlobPart] | None = None
    pending: PendingReply | None = None
    throttle_ms: int = 0
    fetch_quota: bool = False
    offload: DecodeOffload | None = None


def ready_parts(out: Outgoing) -> list[BlobPart] | None:
    """The answer's frame parts if it needs no waiting (nor a worker thread), else None."""
    if out.parts is not None:
        return out.parts
    pending = out.pending
    assert pending is not None
    if pending.error is not None:
        return out.encoder.error(
            out.correlation_id, pending.error, pending.error_message, out.throttle_ms
        )
    if out.offload is not None or pending.waiting is not None or pending.in_order is not None:
        return None
    return _answer_parts(out, pending.message)


async def materialize(out: Outgoing) -> list[BlobPart]:
    """The answer's frame parts, once its deferred answer (if any) is complete; the answer
    to a large request is built and encoded in a worker thread."""
    parts = ready_parts(out)
    if parts is not None:
        return parts
    pending = out.pending
    assert pending is not None and pending.in_order is None  # settled before it was put
    message = pending.message
    if pending.waiting is not None:
        try:
            message = await pending.waiting
        except Exception:
            log.exception("deferred answer to request %d failed", out.correlation_id)
            return _failed_parts(out)
    offload = out.offload
    if offload is None:
        return _answer_parts(out, message)
    return await offload.run(offload.threshold_bytes, partial(_answer_parts, out, message))


def discard(out: Outgoing) -> None:
    """Close the coroutine of an answer that will never be sent (connection gone)."""
    if out.pending is not None and out.pending.waiting is not None:
        out.pending.waiting.close()


def _answer_parts(out: Outgoing, message: object) -> list[BlobPart]:
    try:
        return out.encoder.answer(out.correlation_id, message, out.throttle_ms)
    except Exception:
        log.exception("encoding the answer to request %d failed", out.correlation_id)
        return _failed_parts(out)


def _failed_parts(out: Outgoing) -> list[BlobPart]:
    return out.encoder.error(
        out.correlation_id, ErrorCode.UNKNOWN_SERVER_ERROR, None, out.throttle_ms
    )
