"""Sending a metadata change to the controller until it is decided.

Changes that the controller commits to the metadata log (users' credentials, ACLs) are
resent after a metadata refresh while a node answers NOT_CONTROLLER, or REQUEST_TIMED_OUT
(the commit's fate is unknown), until the timeout. The controller decides each change
against the committed state, so a change resent after it was carried out changes nothing
more.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import trio

from rillet.client.cluster import ClusterClient
from rillet.client.errors import (
    BrokerError,
    ClientTimeoutError,
    ConnectionFailedError,
    RilletError,
)
from rillet.wire.error_codes import ErrorCode

RESEND = frozenset({ErrorCode.NOT_CONTROLLER, ErrorCode.REQUEST_TIMED_OUT})

ToController = Callable[[Any], Awaitable[Any]]
R = TypeVar("R")


async def decided(
    cluster: ClusterClient,
    to_controller: ToController,
    request: Any,
    refusal: Callable[[Any], BrokerError | None],
    what: str,
    timeout_s: float,
    backoff_s: float,
) -> Any:
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
