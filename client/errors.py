"""Client exceptions: one root, one class per protocol error code.

Everything ``rillet.client`` raises on purpose derives from :class:`RilletError`, so a caller
can catch the client's failures without catching its own bugs. Errors the node reports are
:class:`BrokerError` subclasses carrying the wire :class:`ErrorCode`; the class lets callers
``except TopicAlreadyExistsError`` while ``.retriable`` lets generic code decide whether
trying again can help. Failures on the client's side of the wire (no connection, no answer
in time, a closed client, a full buffer) have their own classes.
"""

from __future__ import annotations

from typing import ClassVar

from rillet.wire.error_codes import ErrorCode


class RilletError(Exception):
    """Root of every error raised by ``rillet.client``."""


class ConnectionFailedError(RilletError):
    """A node could not be reached, or the connection broke while a request was pending."""


class ClientTimeoutError(RilletError):
    """A request or an operation did not complete in time."""


class RetriesExhaustedError(ClientTimeoutError):
    """An operation kept failing with retriable errors for its whole retry budget."""


class ClientClosedError(RilletError):
    """The client (or one of its connections) was closed while the operation was pending."""


class BufferFullError(RilletError):
    """The producer's buffer stayed full for longer than ``max_block_ms``."""


class NoOffsetForPartitionError(RilletError):
    """A partition has no position and ``auto_offset_reset`` is "none": seek first."""


class BrokerError(RilletError):
    """The node answered with an error code.

    Subclasses fix ``code``; a code without a subclass of its own becomes a plain
    BrokerError that still carries it.
    """

    code: ErrorCode = ErrorCode.UNKNOWN_SERVER_ERROR
    default_code: ClassVar[ErrorCode] = ErrorCode.UNKNOWN_SERVER_ERROR

    def __init__(self, message: str | None = None, code: ErrorCode | None = None) -> None:
        self.code = code if code is not None else self.default_code
        self.message = message or self.code.name
        super().__init__(self.message)

    @property
    def retriable(self) -> bool:
        """True when sending the same request again (perhaps elsewhere) may succeed."""
        return self.code.retriable

    @property
    def needs_metadata_refresh(self) -> bool:
        """True when the client's view of leaders is probably stale."""
        return self.code.needs_metadata_refresh

    def __reduce__(self) -> tuple[object, ...]:
        # Keep the code when pickled (Spark ships executor exceptions to the driver).
        return (_rebuild, (type(self), self.message, self.code))


def _rebuild(cls: type[BrokerError], message: str, code: ErrorCode) -> BrokerError:
    return cls(message, code)


class UnknownServerError(BrokerError):
    """The node failed in a way it could not describe."""

    default_code = ErrorCode.UNKNOWN_SERVER_ERROR


class OffsetOutOfRangeError(BrokerError):
    """The requested offset is before the log start or after the log end."""

    default_code = ErrorCode.OFFSET_OUT_OF_RANGE


class CorruptMessageError(BrokerError):
    """A record batch failed its CRC or structure check."""

    default_code = ErrorCode.CORRUPT_MESSAGE


class UnknownTopicOrPartitionError(BrokerError):
    """The topic or partition does not exist (or is not known to this node yet)."""

    default_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


class LeaderNotAvailableError(BrokerError):
    """The partition has no leader right now (an election is in progress)."""

    default_code = ErrorCode.LEADER_NOT_AVAILABLE


class OffsetNotAvailableError(BrokerError):
    """A newly elected leader does not know the committed end yet (its high watermark is
    below the start of its epoch): retry shortly."""

    default_code = ErrorCode.OFFSET_NOT_AVAILABLE


class NotLeaderOrFollowerError(BrokerError):
    """The node is not the partition's leader: the client's metadata is stale."""

    default_code = ErrorCode.NOT_LEADER_OR_FOLLOWER


class RequestTimedOutError(BrokerError):
    """The node could not complete the request in time (e.g. acks=all replication)."""

    default_code = ErrorCode.REQUEST_TIMED_OUT


class MessageTooLargeError(BrokerError):
    """A batch is larger than the node or the topic accepts."""

    default_code = ErrorCode.MESSAGE_TOO_LARGE


class NetworkExceptionError(BrokerError):
    """The node lost a connection it needed to answer (e.g. to a replica)."""

    default_code = ErrorCode.NETWORK_EXCEPTION


class CoordinatorLoadInProgressError(BrokerError):
    """The group coordinator is still loading its state."""

    default_code = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS


class CoordinatorNotAvailableError(BrokerError):
    """No group coordinator is available right now."""

    default_code = ErrorCode.COORDINATOR_NOT_AVAILABLE


class NotCoordinatorError(BrokerError):
    """The node is not the coordinator of the group."""

    default_code = ErrorCode.NOT_COORDINATOR


class InvalidTopicError(BrokerError):
    """The topic name is not valid."""

    default_code = ErrorCode.INVALID_TOPIC


class RecordListTooLargeError(BrokerError):
    """A produce request's record set exceeds the node's limit."""

    default_code = ErrorCode.RECORD_LIST_TOO_LARGE


class NotEnoughReplicasError(BrokerError):
    """Fewer in-sync replicas than ``min_insync_replicas``: the write was rejected."""

    default_code = ErrorCode.NOT_ENOUGH_REPLICAS


class NotEnoughReplicasAfterAppendError(BrokerError):
    """The write was appended but the ISR shrank below ``min_insync_replicas`` meanwhile."""

    default_code = ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND


class InvalidRequiredAcksError(BrokerError):
    """acks is not 0, 1 or -1."""

    default_code = ErrorCode.INVALID_REQUIRED_ACKS


class IllegalGenerationError(BrokerError):
    """The group member's generation is stale."""

    default_code = ErrorCode.ILLEGAL_GENERATION


class UnknownMemberIdError(BrokerError):
    """The group does not know this member (it was removed after its session expired)."""

    default_code = ErrorCode.UNKNOWN_MEMBER_ID


class InvalidSessionTimeoutError(BrokerError):
    """The requested session timeout is outside the node's bounds."""

    default_code = ErrorCode.INVALID_SESSION_TIMEOUT


class RebalanceInProgressError(BrokerError):
    """The group is rebalancing; rejoin."""

    default_code = ErrorCode.REBALANCE_IN_PROGRESS


class AuthorizationFailedError(BrokerError):
    """The client is not allowed to do this."""

    default_code = ErrorCode.AUTHORIZATION_FAILED


class GroupAuthorizationFailedError(BrokerError):
    """The client may not use this consumer group (an ACL on the group is missing)."""

    default_code = ErrorCode.GROUP_AUTHORIZATION_FAILED


class ClusterAuthorizationFailedError(BrokerError):
    """The client may not do this cluster-wide operation (an ACL on the cluster is missing)."""

    default_code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED


class SecurityDisabledError(BrokerError):
    """ACLs were asked of a cluster that runs without an authorizer."""

    default_code = ErrorCode.SECURITY_DISABLED


class InvalidTimestampError(BrokerError):
    """A record's timestamp is too far from the broker's clock (the topic's
    ``message.timestamp.before.max.ms`` / ``message.timestamp.after.max.ms``): a wrong client
    clock, refused before a future stamp could pin old segments (past stamps only where the
    topic limits them)."""

    default_code = ErrorCode.INVALID_TIMESTAMP


class UnsupportedVersionError(BrokerError):
    """The node does not serve this version of the api."""

    default_code = ErrorCode.UNSUPPORTED_VERSION


class TopicAlreadyExistsError(BrokerError):
    """A topic of that name exists already."""

    default_code = ErrorCode.TOPIC_ALREADY_EXISTS


class InvalidPartitionsError(BrokerError):
    """The partition count is out of bounds."""

    default_code = ErrorCode.INVALID_PARTITIONS


class InvalidReplicationFactorError(BrokerError):
    """The replication factor is out of bounds (e.g. larger than the number of nodes)."""

    default_code = ErrorCode.INVALID_REPLICATION_FACTOR


class InvalidConfigError(BrokerError):
    """A topic configuration key or value is not valid."""

    default_code = ErrorCode.INVALID_CONFIG


class NotControllerError(BrokerError):
    """The node is not the controller: the client's metadata is stale."""

    default_code = ErrorCode.NOT_CONTROLLER


class InvalidRequestError(BrokerError):
    """The node could not parse or accept the request."""

    default_code = ErrorCode.INVALID_REQUEST


class OutOfOrderSequenceError(BrokerError):
    """An idempotent producer's sequence number skipped ahead."""

    default_code = ErrorCode.OUT_OF_ORDER_SEQUENCE


class DuplicateSequenceError(BrokerError):
    """An idempotent producer's batch was written already."""

    default_code = ErrorCode.DUPLICATE_SEQUENCE


class InvalidProducerEpochError(BrokerError):
    """A newer instance of this producer exists: this one is fenced."""

    default_code = ErrorCode.INVALID_PRODUCER_EPOCH


class InvalidTxnStateError(BrokerError):
    """The request does not fit the transaction's state (or, on produce, the partition was not
    added to the transaction)."""

    default_code = ErrorCode.INVALID_TXN_STATE


class InvalidProducerIdMappingError(BrokerError):
    """The producer id is not the one of this transactional id."""

    default_code = ErrorCode.INVALID_PRODUCER_ID_MAPPING


class InvalidTransactionTimeoutError(BrokerError):
    """The transaction timeout is above transaction.max.timeout.ms."""

    default_code = ErrorCode.INVALID_TRANSACTION_TIMEOUT


class ConcurrentTransactionsError(BrokerError):
    """The previous transaction is still completing: retry."""

    default_code = ErrorCode.CONCURRENT_TRANSACTIONS


class TransactionCoordinatorFencedError(BrokerError):
    """A newer transaction coordinator exists."""

    default_code = ErrorCode.TRANSACTION_COORDINATOR_FENCED


class TransactionalIdAuthorizationFailedError(BrokerError):
    """The principal may not use this transactional id."""

    default_code = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


class ProducerFencedError(BrokerError):
    """A newer instance with this transactional id exists: this one is fenced."""

    default_code = ErrorCode.PRODUCER_FENCED


class TransactionalIdNotFoundError(BrokerError):
    """The coordinator knows no such transactional id."""

    default_code = ErrorCode.TRANSACTIONAL_ID_NOT_FOUND


class BrokerIdNotRegisteredError(BrokerError):
    """UnregisterBroker named a broker the cluster does not have."""

    default_code = ErrorCode.BROKER_ID_NOT_REGISTERED


class InvalidVoterKeyError(BrokerError):
    """A voter change named an unacceptable voter id or directory id."""

    default_code = ErrorCode.INVALID_VOTER_KEY


class DuplicateVoterError(BrokerError):
    """AddRaftVoter named a node that already votes."""

    default_code = ErrorCode.DUPLICATE_VOTER


class VoterNotFoundError(BrokerError):
    """RemoveRaftVoter named a node that does not vote."""

    default_code = ErrorCode.VOTER_NOT_FOUND


class StorageError(BrokerError):
    """The node's disk failed for this partition."""

    default_code = ErrorCode.STORAGE_ERROR


class AuthenticationFailedError(BrokerError):
    """The client could not be authenticated."""

    default_code = ErrorCode.AUTHENTICATION_FAILED


class UnknownProducerIdError(BrokerError):
    """The node no longer knows this producer id."""

    default_code = ErrorCode.UNKNOWN_PRODUCER_ID


class GroupNotEmptyError(BrokerError):
    """The group has members: stop them before deleting it."""

    default_code = ErrorCode.GROUP_NOT_EMPTY


class GroupIdNotFoundError(BrokerError):
    """No such consumer group."""

    default_code = ErrorCode.GROUP_ID_NOT_FOUND


class GroupSubscribedToTopicError(BrokerError):
    """The group's members read that topic: its offsets may not be deleted under them."""

    default_code = ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC


class FetchSessionIdNotFoundError(BrokerError):
    """An incremental follower fetch found no fetch session on its connection (nodes start
    a full fetch; clients never see it)."""

    default_code = ErrorCode.FETCH_SESSION_ID_NOT_FOUND


class UnsupportedSaslMechanismError(BrokerError):
    """The node does not offer that SASL mechanism."""

    default_code = ErrorCode.UNSUPPORTED_SASL_MECHANISM


class IllegalSaslStateError(BrokerError):
    """A SASL request out of order (or any request before authentication)."""

    default_code = ErrorCode.ILLEGAL_SASL_STATE


class ResourceNotFoundError(BrokerError):
    """The named resource (a user's credential, ...) does not exist."""

    default_code = ErrorCode.RESOURCE_NOT_FOUND


class UnacceptableCredentialError(BrokerError):
    """A credential the cluster does not accept (an unknown mechanism, too few iterations)."""

    default_code = ErrorCode.UNACCEPTABLE_CREDENTIAL


class FencedLeaderEpochError(BrokerError):
    """The request named an older leader epoch than the node's: metadata is stale."""

    default_code = ErrorCode.FENCED_LEADER_EPOCH


class UnknownLeaderEpochError(BrokerError):
    """The request named a newer leader epoch than the node knows: it is behind."""

    default_code = ErrorCode.UNKNOWN_LEADER_EPOCH


class UnsupportedCompressionTypeError(BrokerError):
    """The batch uses a compression codec the node does not accept."""

    default_code = ErrorCode.UNSUPPORTED_COMPRESSION_TYPE


class InvalidRecordError(BrokerError):
    """A record in the batch failed the node's validation."""

    default_code = ErrorCode.INVALID_RECORD


class InconsistentGroupProtocolError(BrokerError):
    """The member's protocols do not fit the group's (or the group uses the other group
    protocol)."""

    default_code = ErrorCode.INCONSISTENT_GROUP_PROTOCOL


class InvalidGroupIdError(BrokerError):
    """The group id is empty."""

    default_code = ErrorCode.INVALID_GROUP_ID


class MemberIdRequiredError(BrokerError):
    """Join again with the member id in the answer (a classic group's two-step join)."""

    default_code = ErrorCode.MEMBER_ID_REQUIRED


class GroupMaxSizeReachedError(BrokerError):
    """The group has as many members as it may have."""

    default_code = ErrorCode.GROUP_MAX_SIZE_REACHED


class FencedInstanceIdError(BrokerError):
    """Another member took over this static member's group instance id."""

    default_code = ErrorCode.FENCED_INSTANCE_ID


class FencedMemberEpochError(BrokerError):
    """A Kafka consumer-protocol member sent an epoch the coordinator did not give it."""

    default_code = ErrorCode.FENCED_MEMBER_EPOCH


class UnreleasedInstanceIdError(BrokerError):
    """A live member still holds this static member's group instance id."""

    default_code = ErrorCode.UNRELEASED_INSTANCE_ID


class UnsupportedAssignorError(BrokerError):
    """The coordinator has no server assignor of that name."""

    default_code = ErrorCode.UNSUPPORTED_ASSIGNOR


class UnknownApiError(BrokerError):
    """The node does not serve this api."""

    default_code = ErrorCode.UNKNOWN_API


class ReplicaNotAvailableError(BrokerError):
    """The node does not host a replica of the partition the request named."""

    default_code = ErrorCode.REPLICA_NOT_AVAILABLE


class LogDirNotFoundError(BrokerError):
    """The log directory named is not one of that node's."""

    default_code = ErrorCode.LOG_DIR_NOT_FOUND


class InvalidFetchSessionEpochError(BrokerError):
    """A Kafka fetch session's epoch is not the next one; the client starts a new session."""

    default_code = ErrorCode.INVALID_FETCH_SESSION_EPOCH


class InvalidReplicaAssignmentError(BrokerError):
    """A reassignment names brokers that do not exist, or the same broker twice."""

    default_code = ErrorCode.INVALID_REPLICA_ASSIGNMENT


class PreferredLeaderNotAvailableError(BrokerError):
    """The preferred replica cannot lead now (not alive or not in sync)."""

    default_code = ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE


class EligibleLeadersNotAvailableError(BrokerError):
    """No replica may lead: none is in sync and an unclean election is not allowed."""

    default_code = ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE


class ElectionNotNeededError(BrokerError):
    """The replica asked for already leads the partition."""

    default_code = ErrorCode.ELECTION_NOT_NEEDED


class NoReassignmentInProgressError(BrokerError):
    """A cancel named a partition that is not being moved."""

    default_code = ErrorCode.NO_REASSIGNMENT_IN_PROGRESS


_ALL: tuple[type[BrokerError], ...] = (
    UnknownServerError,
    OffsetOutOfRangeError,
    CorruptMessageError,
    UnknownTopicOrPartitionError,
    LeaderNotAvailableError,
    OffsetNotAvailableError,
    NotLeaderOrFollowerError,
    RequestTimedOutError,
    MessageTooLargeError,
    NetworkExceptionError,
    CoordinatorLoadInProgressError,
    CoordinatorNotAvailableError,
    NotCoordinatorError,
    InvalidTopicError,
    RecordListTooLargeError,
    NotEnoughReplicasError,
    NotEnoughReplicasAfterAppendError,
    InvalidRequiredAcksError,
    IllegalGenerationError,
    UnknownMemberIdError,
    InvalidSessionTimeoutError,
    RebalanceInProgressError,
    AuthorizationFailedError,
    GroupAuthorizationFailedError,
    ClusterAuthorizationFailedError,
    SecurityDisabledError,
    InvalidTimestampError,
    UnsupportedVersionError,
    TopicAlreadyExistsError,
    InvalidPartitionsError,
    InvalidReplicationFactorError,
    InvalidConfigError,
    NotControllerError,
    InvalidRequestError,
    OutOfOrderSequenceError,
    DuplicateSequenceError,
    InvalidProducerEpochError,
    InvalidTxnStateError,
    InvalidProducerIdMappingError,
    InvalidTransactionTimeoutError,
    ConcurrentTransactionsError,
    TransactionCoordinatorFencedError,
    TransactionalIdAuthorizationFailedError,
    ProducerFencedError,
    TransactionalIdNotFoundError,
    StorageError,
    AuthenticationFailedError,
    UnknownProducerIdError,
    GroupIdNotFoundError,
    GroupSubscribedToTopicError,
    FetchSessionIdNotFoundError,
    ResourceNotFoundError,
    UnacceptableCredentialError,
    UnsupportedSaslMechanismError,
    IllegalSaslStateError,
    GroupNotEmptyError,
    FencedLeaderEpochError,
    UnknownLeaderEpochError,
    UnsupportedCompressionTypeError,
    InvalidRecordError,
    InconsistentGroupProtocolError,
    InvalidGroupIdError,
    MemberIdRequiredError,
    GroupMaxSizeReachedError,
    FencedInstanceIdError,
    FencedMemberEpochError,
    UnreleasedInstanceIdError,
    UnsupportedAssignorError,
    UnknownApiError,
    ReplicaNotAvailableError,
    LogDirNotFoundError,
    InvalidFetchSessionEpochError,
    InvalidReplicaAssignmentError,
    PreferredLeaderNotAvailableError,
    EligibleLeadersNotAvailableError,
    ElectionNotNeededError,
    NoReassignmentInProgressError,
    BrokerIdNotRegisteredError,
    InvalidVoterKeyError,
    DuplicateVoterError,
    VoterNotFoundError,
)
_BY_CODE: dict[ErrorCode, type[BrokerError]] = {cls.default_code: cls for cls in _ALL}


def error_class_for(code: ErrorCode) -> type[BrokerError]:
    """The exception class of ``code`` (BrokerError itself for a code without one)."""
    return _BY_CODE.get(code, BrokerError)


def error_for(code: int, message: str | None = None) -> BrokerError:
    """The exception for a protocol error code received from a node.

    Unknown numbers map to UNKNOWN_SERVER_ERROR (a newer node may send codes this client
    does not know); the original number then survives in the message.
    """
    ec = ErrorCode.from_wire(code)
    if ec is ErrorCode.UNKNOWN_SERVER_ERROR and code != ErrorCode.UNKNOWN_SERVER_ERROR:
        message = f"{message or 'error'} (unknown error code {code})"
    return error_class_for(ec)(message, ec)
