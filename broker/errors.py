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


class SequenceGapAfterElection(BrokerError):
    """An idempotent batch with a sequence gap reached a leader elected moments ago, before
    its producer wrote anything under it: the batches missing may still be on their way
    (refused by the previous leader, waiting out the client's retry backoff). Answered
    NOT_LEADER_OR_FOLLOWER, which clients retry, rather than OUT_OF_ORDER_SEQUENCE, on which
    librdkafka renumbers records it has not seen acknowledged and may write them twice."""
