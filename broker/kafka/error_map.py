"""rillet's error codes as Kafka's, and the message Kafka sends with each.

rillet numbers its errors like Kafka wherever Kafka has the same error (wire/error_codes.py),
so most codes pass through; ``to_kafka`` turns the few of its own into the nearest Kafka
error. Here the number becomes kio's error enum.

Where a Kafka response has an error message and rillet's refusal came without one (a
request refused before a handler saw it: an ACL, a controller not reachable, a timeout),
the answer carries Kafka's own message for the error: some clients read an empty message
as success (kafka-python's AlterUserScramCredentials), and every user reads a line better
than a number.
"""

from __future__ import annotations

from collections.abc import Mapping

from kio.schema.errors import ErrorCode as KafkaError

from rillet.wire.error_codes import ErrorCode, to_kafka


def kafka_error(code: int) -> KafkaError:
    """The Kafka error for a rillet error code; numbers Kafka lacks become
    UNKNOWN_SERVER_ERROR."""
    try:
        return KafkaError(to_kafka(ErrorCode.from_wire(code)) if code in _RILLET else code)
    except ValueError:
        return KafkaError.unknown_server_error


_RILLET = frozenset(int(c) for c in ErrorCode)


# Kafka's messages for its errors (Errors.java's defaults), for the codes rillet refuses with.
KAFKA_MESSAGES = {
    ErrorCode.UNKNOWN_SERVER_ERROR: (
        "The server experienced an unexpected error when processing the request."
    ),
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: "This server does not host this topic-partition.",
    ErrorCode.LEADER_NOT_AVAILABLE: (
        "There is no leader for this topic-partition as we are in the middle of a leadership "
        "election."
    ),
    ErrorCode.NOT_LEADER_OR_FOLLOWER: (
        "For requests intended only for the leader, this error indicates that the broker is "
        "not the current leader."
    ),
    ErrorCode.REQUEST_TIMED_OUT: "The request timed out.",
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS: (
        "The coordinator is loading and hence can't process requests."
    ),
    ErrorCode.COORDINATOR_NOT_AVAILABLE: "The coordinator is not available.",
    ErrorCode.NOT_COORDINATOR: "This is not the correct coordinator.",
    ErrorCode.INVALID_TOPIC: "The request attempted to perform an operation on an invalid topic.",
    ErrorCode.AUTHORIZATION_FAILED: "Topic authorization failed.",
    ErrorCode.GROUP_AUTHORIZATION_FAILED: "Group authorization failed.",
    ErrorCode.CLUSTER_AUTHORIZATION_FAILED: "Cluster authorization failed.",
    ErrorCode.INVALID_TIMESTAMP: "The timestamp of the message is out of acceptable range.",
    ErrorCode.TOPIC_ALREADY_EXISTS: "Topic with this name already exists.",
    ErrorCode.INVALID_PARTITIONS: "Number of partitions is below 1.",
    ErrorCode.INVALID_REPLICATION_FACTOR: (
        "Replication factor is below 1 or larger than the number of available brokers."
    ),
    ErrorCode.INVALID_CONFIG: "Configuration is invalid.",
    ErrorCode.NOT_CONTROLLER: "This is not the correct controller for this cluster.",
    ErrorCode.INVALID_REQUEST: (
        "This most likely occurs because of a request being malformed by the client library "
        "or the message was sent to an incompatible broker. See the broker logs for more "
        "details."
    ),
    ErrorCode.SECURITY_DISABLED: "Security features are disabled.",
    ErrorCode.GROUP_NOT_EMPTY: "The group is not empty.",
    ErrorCode.GROUP_ID_NOT_FOUND: "The group id does not exist.",
    ErrorCode.RESOURCE_NOT_FOUND: "A request illegally referred to a resource that does not exist.",
    ErrorCode.UNACCEPTABLE_CREDENTIAL: (
        "Requested credential would not meet criteria for acceptability."
    ),
}


def kafka_message(
    code: int, message: str | None, specific: Mapping[ErrorCode, str] | None = None
) -> str | None:
    """``message``, or for a refusal without one Kafka's message for ``code`` (from
    ``specific``, an api's own, first); None for success."""
    if code == ErrorCode.NONE or message:
        return message
    try:
        error = ErrorCode(code)
    except ValueError:
        return f"error {code}"
    if specific and error in specific:
        return specific[error]
    return KAFKA_MESSAGES.get(error, f"The request failed: {error.name}")
