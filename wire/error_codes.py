"""Stable protocol error codes, numbered like Kafka's where Kafka has the same error.

The numbers are part of the wire format: never renumber a member. Each code knows whether a
client may retry the request (possibly after refreshing metadata). Every code below 1000 has
Kafka's number for the same error, so a Kafka-protocol front end sends ``to_kafka(code)``:
the number itself, or for rillet-only codes the Kafka error closest in meaning.
"""

from __future__ import annotations

from enum import IntEnum


class ErrorCode(IntEnum):
    """Error code carried in responses; ``NONE`` means success."""

    UNKNOWN_SERVER_ERROR = -1
    NONE = 0
    OFFSET_OUT_OF_RANGE = 1
    CORRUPT_MESSAGE = 2
    UNKNOWN_TOPIC_OR_PARTITION = 3
    LEADER_NOT_AVAILABLE = 5
    NOT_LEADER_OR_FOLLOWER = 6
    REQUEST_TIMED_OUT = 7
    MESSAGE_TOO_LARGE = 10
    NETWORK_EXCEPTION = 13
    COORDINATOR_LOAD_IN_PROGRESS = 14
    COORDINATOR_NOT_AVAILABLE = 15
    NOT_COORDINATOR = 16
    INVALID_TOPIC = 17
    RECORD_LIST_TOO_LARGE = 18
    NOT_ENOUGH_REPLICAS = 19
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20
    INVALID_REQUIRED_ACKS = 21
    ILLEGAL_GENERATION = 22
    INCONSISTENT_GROUP_PROTOCOL = 23
    INVALID_GROUP_ID = 24
    UNKNOWN_MEMBER_ID = 25
    INVALID_SESSION_TIMEOUT = 26
    REBALANCE_IN_PROGRESS = 27
    AUTHORIZATION_FAILED = 29  # Kafka's TOPIC_AUTHORIZATION_FAILED
    GROUP_AUTHORIZATION_FAILED = 30
    CLUSTER_AUTHORIZATION_FAILED = 31
    INVALID_TIMESTAMP = 32  # outside message.timestamp.before/after.max.ms of the broker's clock
    UNSUPPORTED_VERSION = 35
    TOPIC_ALREADY_EXISTS = 36
    INVALID_PARTITIONS = 37
    INVALID_REPLICATION_FACTOR = 38
    NOT_CONTROLLER = 41
    INVALID_REQUEST = 42
    OUT_OF_ORDER_SEQUENCE = 45
    DUPLICATE_SEQUENCE = 46
    INVALID_PRODUCER_EPOCH = 47
    # Transactions (KIP-98): a request that does not fit the transaction's state, a producer
    # id not bound to its transactional id, a timeout above transaction.max.timeout.ms, a
    # transaction still completing (retry), a newer coordinator or producer epoch exists.
    INVALID_TXN_STATE = 48
    INVALID_PRODUCER_ID_MAPPING = 49
    INVALID_TRANSACTION_TIMEOUT = 50
    CONCURRENT_TRANSACTIONS = 51
    TRANSACTION_COORDINATOR_FENCED = 52
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
    PRODUCER_FENCED = 90
    TRANSACTIONAL_ID_NOT_FOUND = 105
    INVALID_CONFIG = 40
    STORAGE_ERROR = 56
    LOG_DIR_NOT_FOUND = 57  # AlterReplicaLogDirs: not a log directory of that node
    REPLICA_NOT_AVAILABLE = 9  # AlterReplicaLogDirs: the node hosts no such replica
    AUTHENTICATION_FAILED = 58
    FENCED_LEADER_EPOCH = 74
    UNKNOWN_LEADER_EPOCH = 75
    UNSUPPORTED_COMPRESSION_TYPE = 76
    UNKNOWN_PRODUCER_ID = 59
    GROUP_NOT_EMPTY = 68
    GROUP_ID_NOT_FOUND = 69
    # An incremental follower fetch on a connection with no fetch session (start a full one).
    FETCH_SESSION_ID_NOT_FOUND = 70
    # A Kafka client's incremental fetch with an epoch its session does not expect (KIP-227).
    INVALID_FETCH_SESSION_EPOCH = 71
    MEMBER_ID_REQUIRED = 79
    GROUP_MAX_SIZE_REACHED = 81
    FENCED_INSTANCE_ID = 82
    GROUP_SUBSCRIBED_TO_TOPIC = 86
    # KIP-848 consumer protocol (ConsumerGroupHeartbeat): an epoch the coordinator did not
    # give, a static instance id still held by a live member, an assignor it lacks.
    FENCED_MEMBER_EPOCH = 110
    UNRELEASED_INSTANCE_ID = 111
    UNSUPPORTED_ASSIGNOR = 112  # OffsetDelete: the group's members read that topic
    # A new leader whose high watermark has not yet reached the start of its epoch: it may
    # be below what the previous leader exposed, so offsets are not answered yet.
    OFFSET_NOT_AVAILABLE = 78
    INVALID_RECORD = 87
    UNSUPPORTED_SASL_MECHANISM = 33
    ILLEGAL_SASL_STATE = 34
    RESOURCE_NOT_FOUND = 91
    UNACCEPTABLE_CREDENTIAL = 93
    SECURITY_DISABLED = 54  # ACL apis on a node without an authorizer
    # Partition reassignment and leader election (KIP-455, KIP-460).
    INVALID_REPLICA_ASSIGNMENT = 39
    PREFERRED_LEADER_NOT_AVAILABLE = 80
    ELIGIBLE_LEADERS_NOT_AVAILABLE = 83
    ELECTION_NOT_NEEDED = 84
    NO_REASSIGNMENT_IN_PROGRESS = 85
    # Raft voter changes (KIP-853): a voter key (id, directory id) that is not acceptable,
    # a voter that is already one, a voter that is not one.
    INVALID_VOTER_KEY = 125
    DUPLICATE_VOTER = 126
    VOTER_NOT_FOUND = 127
    BROKER_ID_NOT_REGISTERED = 102  # UnregisterBroker of an unknown broker
    UNKNOWN_API = 1000

    @property
    def retriable(self) -> bool:
        """True when the same request may succeed if sent again (perhaps elsewhere)."""
        return self in _RETRIABLE

    @property
    def needs_metadata_refresh(self) -> bool:
        """True when the client's view of leaders or coordinators is probably stale."""
        return self in _REFRESH

    @classmethod
    def from_wire(cls, value: object) -> ErrorCode:
        """Map a received integer to a member; unknown numbers become UNKNOWN_SERVER_ERROR."""
        if isinstance(value, int) and not isinstance(value, bool):
            try:
                return cls(value)
            except ValueError:
                return cls.UNKNOWN_SERVER_ERROR
        return cls.UNKNOWN_SERVER_ERROR


# rillet-only codes and the Kafka error a Kafka client is sent instead (by number).
_KAFKA_NUMBER_OF = {
    ErrorCode.UNKNOWN_API: 35,  # UNSUPPORTED_VERSION
}


def to_kafka(code: ErrorCode) -> int:
    """Kafka's number for ``code`` (the same number for every code Kafka has)."""
    return _KAFKA_NUMBER_OF.get(code, int(code))


_RETRIABLE = frozenset(
    {
        ErrorCode.CORRUPT_MESSAGE,  # corrupted in transit: resending the same bytes may pass
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,  # metadata may not have propagated yet
        ErrorCode.LEADER_NOT_AVAILABLE,
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.REQUEST_TIMED_OUT,
        ErrorCode.NETWORK_EXCEPTION,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.NOT_ENOUGH_REPLICAS,
        ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        ErrorCode.FETCH_SESSION_ID_NOT_FOUND,
        ErrorCode.INVALID_FETCH_SESSION_EPOCH,
        ErrorCode.REBALANCE_IN_PROGRESS,
        ErrorCode.NOT_CONTROLLER,
        ErrorCode.STORAGE_ERROR,
        ErrorCode.FENCED_LEADER_EPOCH,
        ErrorCode.UNKNOWN_LEADER_EPOCH,
        ErrorCode.OFFSET_NOT_AVAILABLE,
        ErrorCode.CONCURRENT_TRANSACTIONS,
    }
)

_REFRESH = frozenset(
    {
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.LEADER_NOT_AVAILABLE,
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NOT_CONTROLLER,
        ErrorCode.FENCED_LEADER_EPOCH,
        ErrorCode.UNKNOWN_LEADER_EPOCH,
        ErrorCode.NETWORK_EXCEPTION,
    }
)
