"""Client exceptions: one root, one class per protocol error the caller may act on."""

from __future__ import annotations

from rillet.wire.error_codes import ErrorCode


class RilletError(Exception):
    """Root of every error raised by ``rillet.client``."""


class ConnectionFailedError(RilletError):
    """A node could not be reached, or the connection broke."""


class ClientTimeoutError(RilletError):
    """A request or an operation did not complete in time."""


class ClientClosedError(RilletError):
    """The client (or its connection) was closed while the operation was pending."""


class BufferFullError(RilletError):
    """The producer's buffer stayed full for longer than ``max_block_ms``."""


class BrokerError(RilletError):
    """The node answered with an error code."""

    code: ErrorCode = ErrorCode.UNKNOWN_SERVER_ERROR

    def __init__(self, message: str | None = None, code: ErrorCode | None = None) -> None:
        if code is not None:
            self.code = code
        super().__init__(message or self.code.name)

    @property
    def retriable(self) -> bool:
        return self.code.retriable


class UnknownServerError(BrokerError):
    code = ErrorCode.UNKNOWN_SERVER_ERROR


class OffsetOutOfRangeError(BrokerError):
    code = ErrorCode.OFFSET_OUT_OF_RANGE


class CorruptMessageError(BrokerError):
    code = ErrorCode.CORRUPT_MESSAGE


class UnknownTopicOrPartitionError(BrokerError):
    code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


class LeaderNotAvailableError(BrokerError):
    code = ErrorCode.LEADER_NOT_AVAILABLE


class NotLeaderOrFollowerError(BrokerError):
    code = ErrorCode.NOT_LEADER_OR_FOLLOWER


class RequestTimedOutError(BrokerError):
    code = ErrorCode.REQUEST_TIMED_OUT


class MessageTooLargeError(BrokerError):
    code = ErrorCode.MESSAGE_TOO_LARGE


class InvalidTopicError(BrokerError):
    code = ErrorCode.INVALID_TOPIC


class NotEnoughReplicasError(BrokerError):
    code = ErrorCode.NOT_ENOUGH_REPLICAS


class InvalidRequiredAcksError(BrokerError):
    code = ErrorCode.INVALID_REQUIRED_ACKS


class TopicAlreadyExistsError(BrokerError):
    code = ErrorCode.TOPIC_ALREADY_EXISTS


class InvalidPartitionsError(BrokerError):
    code = ErrorCode.INVALID_PARTITIONS


class InvalidReplicationFactorError(BrokerError):
    code = ErrorCode.INVALID_REPLICATION_FACTOR


class InvalidConfigError(BrokerError):
    code = ErrorCode.INVALID_CONFIG


class InvalidRequestError(BrokerError):
    code = ErrorCode.INVALID_REQUEST


class UnsupportedVersionError(BrokerError):
    code = ErrorCode.UNSUPPORTED_VERSION


class StorageError(BrokerError):
    code = ErrorCode.STORAGE_ERROR


class FencedLeaderEpochError(BrokerError):
    code = ErrorCode.FENCED_LEADER_EPOCH


class OutOfOrderSequenceError(BrokerError):
    code = ErrorCode.OUT_OF_ORDER_SEQUENCE


class AuthenticationFailedError(BrokerError):
    code = ErrorCode.AUTHENTICATION_FAILED


class AuthorizationFailedError(BrokerError):
    code = ErrorCode.AUTHORIZATION_FAILED


_BY_CODE: dict[ErrorCode, type[BrokerError]] = {
    cls.code: cls
    for cls in (
        UnknownServerError,
        OffsetOutOfRangeError,
        CorruptMessageError,
        UnknownTopicOrPartitionError,
        LeaderNotAvailableError,
        NotLeaderOrFollowerError,
        RequestTimedOutError,
        MessageTooLargeError,
        InvalidTopicError,
        NotEnoughReplicasError,
        InvalidRequiredAcksError,
        TopicAlreadyExistsError,
        InvalidPartitionsError,
        InvalidReplicationFactorError,
        InvalidConfigError,
        InvalidRequestError,
        UnsupportedVersionError,
        StorageError,
        FencedLeaderEpochError,
        OutOfOrderSequenceError,
        AuthenticationFailedError,
        AuthorizationFailedError,
    )
}


def error_for(code: int, message: str | None = None) -> BrokerError:
    """The exception for a protocol error code (a generic BrokerError for the rest)."""
    ec = ErrorCode.from_wire(code)
    cls = _BY_CODE.get(ec)
    if cls is not None:
        return cls(message)
    return BrokerError(message, ec)
