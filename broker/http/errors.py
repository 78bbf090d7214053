"""The HTTP package's exception root."""

from __future__ import annotations

from rillet.broker.errors import BrokerError


class HttpError(BrokerError):
    """A request the endpoint refuses; ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class HttpBindError(BrokerError):
    """The endpoint's port cannot be bound (in use, not permitted): the node does not start."""
