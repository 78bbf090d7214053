"""Exception root of the broker package."""

from __future__ import annotations


class BrokerError(Exception):
    """Root of every error raised by ``rillet.broker``."""


class ConfigError(BrokerError):
    """The node configuration is invalid; the message names the key and the problem."""


class TopicError(BrokerError):
    """A topic operation was refused; carries the protocol error code to answer with."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class ControllerUnreachable(BrokerError):
    """No controller answered a broker's request before its deadline."""
