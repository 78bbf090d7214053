"""Versioned metadata records: what the controller writes to the Raft log.

Each record is a CBOR map ``{"type": int, "version": int, "body": {...}}``; bodies are
dataclasses validated by :mod:`rillet.wire.schema`, so a malformed or unknown record is a
typed error, never a crash of the state machine. Type numbers are part of the log format:
never renumber one. Group and offset records (the consumer-groups issue) take 30-49,
classic (JoinGroup/SyncGroup) group records 40-49 of those; partition reassignment 50-54;
transactions 55-59; the feature level (``features.py``) 62-64.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import cbor2

from rillet.metadata_quorum.acl_registry import AclCreated, AclRemoved
from rillet.metadata_quorum.classic_group_records import (
    ClassicGroupJoined,
    ClassicGroupSynced,
    ClassicMemberReplaced,
    ClassicMembersRemoved,
    ClassicRebalanceStarted,
)
from rillet.metadata_quorum.errors import MetadataRecordError
from rillet.metadata_quorum.features import FeatureLevel
from rillet.metadata_quorum.group_records import (
    GroupDeleted,
    GroupMember,
    GroupMemberOwned,
    GroupMemberRemoved,
    GroupOffsetsDeleted,
    GroupTargetAssignment,
    OffsetsCommitted,
)
from rillet.metadata_quorum.scram_registry import RemoveUserScramCredential, UserScramCredential
from rillet.metadata_quorum.txn_registry import TransactionRecord, TransactionRemoved
from rillet.wire.errors import WireError
from rillet.wire.frame import BlobPart
from rillet.wire.schema import from_wire, to_wire

RECORD_VERSION = 1
NO_LEADER = -1


class RecordType(IntEnum):
    REGISTER_BROKER = 1
    FENCE_BROKER = 2
    UNFENCE_BROKER = 3
    UNREGISTER_BROKER = 4
    CONTROLLER_ACTIVATED = 5
    TOPIC = 10
    PARTITION = 11
    PARTITION_CHANGE = 12
    REMOVE_TOPIC = 13
    TOPIC_CONFIGS = 14
    USER_SCRAM_CREDENTIAL = 15
    REMOVE_USER_SCRAM_CREDENTIAL = 16
    ACL_CREATED = 17
    ACL_REMOVED = 18
    PRODUCER_IDS = 20
    GROUP_MEMBER = 30
    GROUP_MEMBER_REMOVED = 31
    GROUP_TARGET_ASSIGNMENT = 32
    GROUP_MEMBER_OWNED = 33
    OFFSETS_COMMITTED = 34
    GROUP_DELETED = 35
    GROUP_OFFSETS_DELETED = 36
    CLASSIC_GROUP_JOINED = 40
    CLASSIC_GROUP_SYNCED = 41
    CLASSIC_REBALANCE_STARTED = 42
    CLASSIC_MEMBER_REPLACED = 43
    CLASSIC_MEMBERS_REMOVED = 44
    PARTITION_REASSIGNMENT = 50
    BROKER_CONFIGS = 51
    TRANSACTION = 55
    TRANSACTION_REMOVED = 56
    FEATURE_LEVEL = 62


@dataclass(frozen=True, slots=True)
class RegisterBroker:
    """A broker (re)joins; its broker epoch becomes this record's log index."""

    broker_id: int
    incarnation_id: str
    host: str
    port: int
    rack: str | None = None
    kafka_host: str = ""  # its Kafka-protocol listener; port -1 when it runs none
    kafka_port: int = -1
    # The highest feature level the node supports (features.py); 0: not stated, as nodes
    # of release 0.1.0 (which ignore the field) register: the base level.
    max_feature_level: int = 0


@dataclass(frozen=True, slots=True)
class FenceBroker:
    """The broker's lease expired (or it shut down): it may lead nothing."""

    broker_id: int
    broker_epoch: int


@dataclass(frozen=True, slots=True)
class UnfenceBroker:
    broker_id: int
    broker_epoch: int


@dataclass(frozen=True, slots=True)
class UnregisterBroker:
    broker_id: int
    broker_epoch: int


@dataclass(frozen=True, slots=True)
class BrokerConfigsRecord:
    """A broker's dynamic settings from now on (Kafka's broker-resource configs: the
    replication throttle rates): the whole map, replacing the previous one. Broker id -1
    holds the cluster-wide defaults (Kafka's resource name "")."""

    broker_id: int
    configs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TopicRecord:
    name: str
    topic_id: str
    configs: dict[str, str] = field(default_factory=dict)
    request_id: str = ""  # the CreateTopics request that created it (retries succeed)


@dataclass(frozen=True, slots=True)
class TopicConfigsRecord:
    """A topic's config overrides from now on: the whole map, replacing the previous one
    (applying it twice is the same as once)."""

    topic_id: str
    configs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PartitionRecord:
    topic_id: str
    partition: int
    replicas: list[int]
    isr: list[int]
    leader: int
    leader_epoch: int = 0
    partition_epoch: int = 0


@dataclass(frozen=True, slots=True)
class PartitionChange:
    """A leader and/or ISR change. None leaves a field unchanged; leader -1 means none.

    A leader change bumps the leader epoch; any change bumps the partition epoch, against
    which partition leaders' ISR requests are checked.
    """

    topic_id: str
    partition: int
    leader: int | None = None
    isr: list[int] | None = None


@dataclass(frozen=True, slots=True)
class PartitionReassignment:
    """A partition's replica set changes (Kafka's KIP-455): ``replicas`` is the whole set
    from now on, ``adding_replicas``/``removing_replicas`` the part of it still moving in or
    out (both empty: no move in progress). The ISR and leader are given whole, in the same
    record, so no prefix of the log shows a leader or ISR member outside the replicas. A
    leader change bumps the leader epoch; any change bumps the partition epoch.
    """

    topic_id: str
    partition: int
    replicas: list[int]
    isr: list[int]
    leader: int
    adding_replicas: list[int] = field(default_factory=list)
    removing_replicas: list[int] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class RemoveTopic:
    topic_id: str
    request_id: str = ""  # the DeleteTopics request that removed it (retries succeed)


@dataclass(frozen=True, slots=True)
class ProducerIds:
    """A block of producer ids handed to a broker: ids [first, first + size)."""

    broker_id: int
    first_producer_id: int
    block_size: int


@dataclass(frozen=True, slots=True)
class ControllerActivated:
    """A new controller's barrier: it decides nothing until this record is applied.

    A new Raft leader does not know which entries of earlier terms are committed until an
    entry of its own term commits; applying this record proves every earlier committed
    record is applied, so the controller never decides on stale state (a stale decision,
    applied after the newer records it did not see, would undo them). Changes no state.
    """

    node_id: int
    term: int


MetadataRecord = (
    RegisterBroker
    | FenceBroker
    | UnfenceBroker
    | UnregisterBroker
    | BrokerConfigsRecord
    | ControllerActivated
    | TopicRecord
    | TopicConfigsRecord
    | UserScramCredential
    | RemoveUserScramCredential
    | AclCreated
    | AclRemoved
    | PartitionRecord
    | PartitionChange
    | PartitionReassignment
    | RemoveTopic
    | ProducerIds
    | GroupMember
    | GroupMemberRemoved
    | GroupTargetAssignment
    | GroupMemberOwned
    | OffsetsCommitted
    | GroupDeleted
    | GroupOffsetsDeleted
    | ClassicGroupJoined
    | ClassicGroupSynced
    | ClassicRebalanceStarted
    | ClassicMemberReplaced
    | ClassicMembersRemoved
    | TransactionRecord
    | TransactionRemoved
    | FeatureLevel
)

TYPES: dict[RecordType, type] = {
    RecordType.REGISTER_BROKER: RegisterBroker,
    RecordType.FENCE_BROKER: FenceBroker,
    RecordType.UNFENCE_BROKER: UnfenceBroker,
    RecordType.UNREGISTER_BROKER: UnregisterBroker,
    RecordType.BROKER_CONFIGS: BrokerConfigsRecord,
    RecordType.CONTROLLER_ACTIVATED: ControllerActivated,
    RecordType.TOPIC: TopicRecord,
    RecordType.PARTITION: PartitionRecord,
    RecordType.PARTITION_CHANGE: PartitionChange,
    RecordType.REMOVE_TOPIC: RemoveTopic,
    RecordType.TOPIC_CONFIGS: TopicConfigsRecord,
    RecordType.USER_SCRAM_CREDENTIAL: UserScramCredential,
    RecordType.REMOVE_USER_SCRAM_CREDENTIAL: RemoveUserScramCredential,
    RecordType.ACL_CREATED: AclCreated,
    RecordType.ACL_REMOVED: AclRemoved,
    RecordType.PRODUCER_IDS: ProducerIds,
    RecordType.GROUP_MEMBER: GroupMember,
    RecordType.GROUP_MEMBER_REMOVED: GroupMemberRemoved,
    RecordType.GROUP_TARGET_ASSIGNMENT: GroupTargetAssignment,
    RecordType.GROUP_MEMBER_OWNED: GroupMemberOwned,
    RecordType.OFFSETS_COMMITTED: OffsetsCommitted,
    RecordType.GROUP_DELETED: GroupDeleted,
    RecordType.GROUP_OFFSETS_DELETED: GroupOffsetsDeleted,
    RecordType.CLASSIC_GROUP_JOINED: ClassicGroupJoined,
    RecordType.CLASSIC_GROUP_SYNCED: ClassicGroupSynced,
    RecordType.CLASSIC_REBALANCE_STARTED: ClassicRebalanceStarted,
    RecordType.CLASSIC_MEMBER_REPLACED: ClassicMemberReplaced,
    RecordType.CLASSIC_MEMBERS_REMOVED: ClassicMembersRemoved,
    RecordType.PARTITION_REASSIGNMENT: PartitionReassignment,
    RecordType.TRANSACTION: TransactionRecord,
    RecordType.TRANSACTION_REMOVED: TransactionRemoved,
    RecordType.FEATURE_LEVEL: FeatureLevel,
}
TYPE_OF: dict[type, RecordType] = {cls: t for t, cls in TYPES.items()}


def _to_map(record: MetadataRecord) -> dict[str, Any]:
    blobs: list[BlobPart] = []
    body = to_wire(record, blobs)
    assert not blobs, "metadata records carry no blobs"
    return {"type": int(TYPE_OF[type(record)]), "version": RECORD_VERSION, "body": body}


def encode_record(record: MetadataRecord) -> bytes:
    return bytes(cbor2.dumps(_to_map(record), canonical=True))


def encode_entry(records: Sequence[MetadataRecord]) -> bytes:
    """One Raft entry holding a decision's records: they commit (and apply) all or none,
    like KRaft's atomic record batches. A single record is encoded as itself."""
    if len(records) == 1:
        return encode_record(records[0])
    if not records:
        raise MetadataRecordError("an entry needs at least one record")
    return bytes(cbor2.dumps([_to_map(r) for r in records], canonical=True))


def decode_entry(data: bytes) -> list[MetadataRecord]:
    """The records of one Raft entry (a single record, or an atomic batch of them)."""
    raw = _loads(data)
    if isinstance(raw, list):
        if not raw:
            raise MetadataRecordError("empty metadata record batch")
        return [_from_map(item) for item in raw]
    return [_from_map(raw)]


def decode_record(data: bytes) -> MetadataRecord:
    return _from_map(_loads(data))


def _loads(data: bytes) -> Any:
    try:
        return cbor2.loads(data)
    except Exception as exc:  # cbor2 raises assorted types on garbage
        raise MetadataRecordError(f"metadata record is not CBOR: {exc}") from None


def _from_map(raw: Any) -> MetadataRecord:
    if not isinstance(raw, dict):
        raise MetadataRecordError("metadata record is not a map")
    version = raw.get("version")
    if version != RECORD_VERSION:
        raise MetadataRecordError(f"unsupported metadata record version {version!r}")
    type_id = raw.get("type")
    try:
        if not isinstance(type_id, int):
            raise TypeError(type_id)
        cls = TYPES[RecordType(type_id)]
    except (ValueError, KeyError, TypeError):
        raise MetadataRecordError(f"unknown metadata record type {type_id!r}") from None
    try:
        record: MetadataRecord = from_wire(cls, raw.get("body"), [])
    except WireError as exc:
        raise MetadataRecordError(f"malformed {cls.__name__}: {exc}") from None
    return record
