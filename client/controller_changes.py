"""Sending a metadata change to the controller until it is decided.

Changes that the controller commits to the metadata log (users' credentials, ACLs) are
resent after a metadata refresh while a node answers NOT_CONTROLLER, or REQUEST_TIMED_OUT
(the commit's fate is unknown), until the timeout. The controller decides each change
against the committed state, so a change resent after it was carried out changes nothing
more.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import trio

from rillet.client.cluster import ClusterClient
from rillet.client.errors import (
    BrokerError,
    ClientTimeoutError,
    ConnectionFailedError,
    RilletError,
)
from rillet.wire.error_codes import ErrorCode
from rillet.wire.request import Request

RESEND = frozenset({ErrorCode.NOT_CONTROLLER, ErrorCode.REQUEST_TIMED_OUT})


class ToController(Protocol):
    """Sends a request to the controller and returns its answer."""

    async def __call__(self, request: Request[R]) -> R: ...


R = TypeVar("R")


async def decided(
    cluster: ClusterClient,
    to_controller: ToController,
    request: Request[R],
    refusal: Callable[[Any], BrokerError | None],
    what: str,
    timeout_s: float,
    backoff_s: float,
) -> R:
    """The controller's answer to ``request`` once it is not a resend code. ``refusal``
    reads an answer's error (None: it succeeded), raised unless it is one to resend."""
    last: RilletError | None = None
    with trio.move_on_after(timeout_s):
        while True:
            try:
                response = await to_controller(request)
            except (ConnectionFailedError, ClientTimeoutError) as exc:
                last = exc
            except BrokerError as exc:
                if exc.code not in RESEND:
                    raise
                last = exc
            else:
                err = refusal(response)
                if err is None:
                    return response
                if err.code not in RESEND:
                    raise err
                last = err
            await trio.sleep(backoff_s)
            backoff_s = min(backoff_s * 2, 1.0)
            try:
                await cluster.refresh_metadata([])
            except RilletError as exc:
                last = exc
    raise ClientTimeoutError(f"{what} did not complete (last error: {last})")
