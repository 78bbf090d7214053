"""The metadata state machine: the registries every node derives from the metadata log.

``apply`` is deterministic and does no I/O: given the same records at the same indexes,
every node ends with the same state (compared byte for byte through ``to_snapshot``). It
mutates in place, so applying a record costs O(1) instead of copying the registries; a
snapshot is the immutable, canonical form.

A record that no longer makes sense when applied (fencing a broker by a stale epoch, changing
a removed topic) is ignored, deterministically: the controller validated it against the
state it knew, and the log may have moved on since.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import cbor2

from rillet.metadata_quorum.acl_registry import AclCreated, AclRegistry, AclRemoved
from rillet.metadata_quorum.classic_group_records import (
    ClassicGroupJoined,
    ClassicGroupSynced,
    ClassicMemberReplaced,
    ClassicMembersRemoved,
    ClassicRebalanceStarted,
)
from rillet.metadata_quorum.classic_group_registry import ClassicGroupRegistry
from rillet.metadata_quorum.errors import SnapshotError
from rillet.metadata_quorum.features import BASE_LEVEL, FEATURE_NAME, FeatureLevel
from rillet.metadata_quorum.group_records import (
    GroupDeleted,
    GroupMember,
    GroupMemberOwned,
    GroupMemberRemoved,
    GroupOffsetsDeleted,
    GroupTargetAssignment,
    OffsetsCommitted,
)
from rillet.metadata_quorum.group_registry import GroupRegistry

# PartitionState is read from here by the rest of the code base.
from rillet.metadata_quorum.partition_state import PartitionState as PartitionState  # noqa: PLC0414
from rillet.metadata_quorum.partition_state import partition_row
from rillet.metadata_quorum.records import (
    NO_LEADER,
    BrokerConfigsRecord,
    ControllerActivated,
    FenceBroker,
    MetadataRecord,
    PartitionChange,
    PartitionReassignment,
    PartitionRecord,
    ProducerIds,
    RegisterBroker,
    RemoveTopic,
    TopicConfigsRecord,
    TopicRecord,
    UnfenceBroker,
    UnregisterBroker,
)
from rillet.metadata_quorum.scram_registry import (
    RemoveUserScramCredential,
    ScramRegistry,
    UserScramCredential,
)
from rillet.metadata_quorum.topic_requests import TopicRequestLog
from rillet.metadata_quorum.txn_registry import TransactionRecord, TransactionRemoved, TxnRegistry

SNAPSHOT_VERSION = 3  # 2: with the group registries; 3: with classic groups
_READABLE_SNAPSHOT_VERSIONS = (2, 3)


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    broker_id: int
    broker_epoch: int  # log index of its RegisterBroker record
    incarnation_id: str
    host: str
    port: int
    rack: str | None
    fenced: bool
    kafka_host: str = ""  # the Kafka-protocol listener; port -1 when the broker runs none
    kafka_port: int = -1


@dataclass(frozen=True, slots=True)
class TopicState:
    name: str
    topic_id: str
    configs: dict[str, str]


class MetadataState:
    def __init__(self) -> None:
        self.last_applied_index = 0
        self.brokers: dict[int, BrokerRegistration] = {}
        # Brokers' dynamic settings (replication throttle rates); -1: cluster-wide defaults.
        self.broker_configs: dict[int, dict[str, str]] = {}
        self.topics: dict[str, TopicState] = {}  # by topic id
        self.topic_ids: dict[str, str] = {}  # name -> topic id
        self.partitions: dict[tuple[str, int], PartitionState] = {}  # (topic id, partition)
        # The same partitions by topic id: a topic's partitions are looked up (metadata
        # answers, topic creation and deletion) without scanning every partition of the
        # cluster. Kept in step with ``partitions`` by :meth:`_set_partition`.
        self._by_topic: dict[str, dict[int, PartitionState]] = {}
        # Partitions with a move in progress (the controller's tick completes them).
        self.moving_partitions: set[tuple[str, int]] = set()
        # Per topic id, the index of the last entry that changed its partitions or configs:
        # lets a node keep answers about a topic until it changes (topic_version).
        self._topic_versions: dict[str, int] = {}
        self.next_producer_id = 0
        self.groups = GroupRegistry()  # consumer, ownership and offset registries
        self.classic_groups = ClassicGroupRegistry()  # JoinGroup/SyncGroup groups
        self.topic_requests = TopicRequestLog()  # admin requests that changed topics
        self.scram = ScramRegistry()  # users' SCRAM credentials (SASL)
        self.acls = AclRegistry()  # who may do what (the authorizer's ACLs)
        self.transactions = TxnRegistry()  # transactional ids (the transaction coordinator)
        # The cluster's feature level (features.py): the base level until a record sets it.
        self.feature_level = BASE_LEVEL
        self.feature_level_set = False
        # Per broker, the highest feature level its registration states (none: the base).
        self.broker_max_levels: dict[int, int] = {}
        # Partitions added, changed or removed since the last drain_changed_partitions():
        # lets a node act on what an entry changed instead of rescanning every partition.
        # Bookkeeping for one reader on this node, not state (never in a snapshot).
        self._changed_partitions: set[tuple[str, int]] = set()

    # -- applying -------------------------------------------------------------------------

    def apply(self, index: int, record: MetadataRecord) -> None:
        self.apply_entry(index, [record])

    def apply_entry(self, index: int, records: list[MetadataRecord]) -> None:
        """Apply the records of the Raft entry at ``index`` (an atomic batch), in order."""
        if index <= self.last_applied_index:
            raise ValueError(f"index {index} already applied (at {self.last_applied_index})")
        self.last_applied_index = index
        for record in records:
            self._apply_one(index, record)

    def _apply_one(self, index: int, record: MetadataRecord) -> None:
        match record:
            case RegisterBroker():
                self.brokers[record.broker_id] = BrokerRegistration(
                    record.broker_id,
                    index,
                    record.incarnation_id,
                    record.host,
                    record.port,
                    record.rack,
                    fenced=True,  # unfenced once it has caught up
                    kafka_host=record.kafka_host,
                    kafka_port=record.kafka_port,
                )
                if record.max_feature_level > 0:
                    self.broker_max_levels[record.broker_id] = record.max_feature_level
                else:
                    self.broker_max_levels.pop(record.broker_id, None)
            case FenceBroker() | UnfenceBroker():
                b = self.brokers.get(record.broker_id)
                if b is not None and b.broker_epoch == record.broker_epoch:
                    fenced = isinstance(record, FenceBroker)
                    self.brokers[record.broker_id] = replace(b, fenced=fenced)
            case UnregisterBroker():
                b = self.brokers.get(record.broker_id)
                if b is not None and b.broker_epoch == record.broker_epoch:
                    del self.brokers[record.broker_id]
                    self.broker_max_levels.pop(record.broker_id, None)
            case BrokerConfigsRecord():
                if record.configs:
                    self.broker_configs[record.broker_id] = dict(record.configs)
                else:
                    self.broker_configs.pop(record.broker_id, None)
            case TopicRecord():
                if record.name not in self.topic_ids and record.topic_id not in self.topics:
                    self.topics[record.topic_id] = TopicState(
                        record.name, record.topic_id, dict(record.configs)
                    )
                    self.topic_ids[record.name] = record.topic_id
                    self._topic_versions[record.topic_id] = index
                    self.topic_requests.note(record.request_id, record.name)
                    # Its partitions came first (pending): they appear now.
                    self._changed_partitions.update(self._keys_of(record.topic_id))
            case PartitionRecord():
                # A large topic's partitions come in entries before its TopicRecord (see
                # entry_split): until that is applied they are pending, and nothing looks
                # them up by topic. Pending partitions of a topic that never came (its
                # controller failed midway) are removed by the next controller.
                self._changed_partitions.add((record.topic_id, record.partition))
                self._set_partition(
                    (record.topic_id, record.partition),
                    PartitionState(
                        tuple(record.replicas),
                        tuple(record.isr),
                        record.leader,
                        record.leader_epoch,
                        record.partition_epoch,
                    ),
                )
            case PartitionChange():
                self._apply_partition_change(record)
            case PartitionReassignment():
                self._apply_reassignment(record)
            case TopicConfigsRecord():
                topic = self.topics.get(record.topic_id)
                if topic is not None:  # a new state object: readers compare by identity
                    self.topics[record.topic_id] = TopicState(
                        topic.name, topic.topic_id, dict(record.configs)
                    )
                    self._topic_versions[record.topic_id] = index
                    self._changed_partitions.update(self._keys_of(record.topic_id))
            case RemoveTopic():
                topic = self.topics.pop(record.topic_id, None)
                for key in self._keys_of(record.topic_id):
                    del self.partitions[key]  # also the pending partitions of no topic
                    self.moving_partitions.discard(key)
                    self._changed_partitions.add(key)
                self._by_topic.pop(record.topic_id, None)
                self._topic_versions.pop(record.topic_id, None)
                if topic is not None:
                    del self.topic_ids[topic.name]
                    self.groups.remove_topic(record.topic_id)
                    self.topic_requests.note(record.request_id, topic.name)
            case UserScramCredential() | RemoveUserScramCredential():
                self.scram.apply(record)
            case AclCreated() | AclRemoved():
                self.acls.apply(record)
            case TransactionRecord() | TransactionRemoved():
                self.transactions.apply(record)
            case FeatureLevel():
                if record.name == FEATURE_NAME:
                    self.feature_level = max(self.feature_level, record.level)
                    self.feature_level_set = True
            case ControllerActivated():
                pass  # a barrier: see the record's docstring
            case ProducerIds():
                self.next_producer_id = max(
                    self.next_producer_id, record.first_producer_id + record.block_size
                )
            case (
                GroupMember()
                | GroupMemberRemoved()
                | GroupTargetAssignment()
                | GroupMemberOwned()
                | OffsetsCommitted()
                | GroupOffsetsDeleted()
                | GroupDeleted()
            ):
                self.groups.apply(record)
                if isinstance(record, GroupDeleted):
                    self.classic_groups.delete(record.group_id)
            case (
                ClassicGroupJoined()
                | ClassicGroupSynced()
                | ClassicRebalanceStarted()
                | ClassicMemberReplaced()
                | ClassicMembersRemoved()
            ):
                self.classic_groups.apply(record)

    def _apply_partition_change(self, change: PartitionChange) -> None:
        key = (change.topic_id, change.partition)
        current = self.partitions.get(key)
        if current is None:
            return
        leader, leader_epoch = current.leader, current.leader_epoch
        if change.leader is not None and change.leader != current.leader:
            leader, leader_epoch = change.leader, current.leader_epoch + 1
        isr = tuple(change.isr) if change.isr is not None else current.isr
        self._changed_partitions.add(key)
        self._set_partition(
            key,
            replace(
                current,
                isr=isr,
                leader=leader,
                leader_epoch=leader_epoch,
                partition_epoch=current.partition_epoch + 1,
            ),
        )

    def _apply_reassignment(self, change: PartitionReassignment) -> None:
        key = (change.topic_id, change.partition)
        current = self.partitions.get(key)
        if current is None:
            return
        leader_epoch = current.leader_epoch + (change.leader != current.leader)
        self._changed_partitions.add(key)
        self._set_partition(
            key,
            PartitionState(
                tuple(change.replicas),
                tuple(change.isr),
                change.leader,
                leader_epoch,
                current.partition_epoch + 1,
                tuple(change.adding_replicas),
                tuple(change.removing_replicas),
            ),
        )

    def _set_partition(self, key: tuple[str, int], state: PartitionState) -> None:
        self.partitions[key] = state
        if state.moving:
            self.moving_partitions.add(key)
        else:
            self.moving_partitions.discard(key)
        self._by_topic.setdefault(key[0], {})[key[1]] = state
        self._topic_versions[key[0]] = self.last_applied_index

    def _keys_of(self, topic_id: str) -> list[tuple[str, int]]:
        return [(topic_id, p) for p in self._by_topic.get(topic_id, ())]

    def drain_changed_partitions(self) -> set[tuple[str, int]]:
        """(topic id, partition) of every partition added, changed or removed since the
        previous call (a single reader: the node's partition reconciler)."""
        changed, self._changed_partitions = self._changed_partitions, set()
        return changed

    # -- queries --------------------------------------------------------------------------

    def topic_by_name(self, name: str) -> TopicState | None:
        topic_id = self.topic_ids.get(name)
        return self.topics.get(topic_id) if topic_id is not None else None

    def partitions_of(self, topic_id: str) -> dict[int, PartitionState]:
        return dict(self._by_topic.get(topic_id, {}))

    def topic_version(self, topic_id: str) -> int:
        """Index of the last applied entry that changed the topic (its partitions or
        configs); -1 for an unknown topic. Equal versions mean an unchanged topic."""
        return self._topic_versions.get(topic_id, -1)

    def pending_topic_ids(self) -> list[str]:
        """Topic ids with partitions but no TopicRecord: a split creation that did not
        finish (its controller lost leadership between entries)."""
        return sorted(t for t in self._by_topic if t not in self.topics)

    def unfenced_brokers(self) -> list[int]:
        return sorted(b.broker_id for b in self.brokers.values() if not b.fenced)

    def leaderless_partitions(self) -> list[tuple[str, int]]:
        return sorted(k for k, s in self.partitions.items() if s.leader == NO_LEADER)

    # -- snapshots ------------------------------------------------------------------------

    def to_snapshot(self) -> bytes:
        """Canonical CBOR of the whole state: equal states give equal bytes."""
        doc: dict[str, Any] = {
            "version": SNAPSHOT_VERSION,
            "last_applied_index": self.last_applied_index,
            "next_producer_id": self.next_producer_id,
            "brokers": [
                [
                    b.broker_id,
                    b.broker_epoch,
                    b.incarnation_id,
                    b.host,
                    b.port,
                    b.rack,
                    b.fenced,
                    b.kafka_host,
                    b.kafka_port,
                ]
                for b in sorted(self.brokers.values(), key=lambda b: b.broker_id)
            ],
            "topics": [
                [t.topic_id, t.name, t.configs]
                for t in sorted(self.topics.values(), key=lambda t: t.topic_id)
            ],
            "partitions": [partition_row(t, p, s) for (t, p), s in sorted(self.partitions.items())],
            "groups": self.groups.to_doc(),
            "classic_groups": self.classic_groups.to_doc(),
            "topic_requests": self.topic_requests.to_doc(),
            "scram": self.scram.to_doc(),
            "acls": self.acls.to_doc(),
        }
        if self.transactions.transactions:  # absent from snapshots of older builds
            doc["transactions"] = self.transactions.to_doc()
        if self.feature_level_set:  # keys the previous release ignores
            doc["feature_level"] = self.feature_level
        if self.broker_max_levels:
            doc["broker_max_levels"] = [[b, v] for b, v in sorted(self.broker_max_levels.items())]
        if self.broker_configs:  # likewise
            doc["broker_configs"] = [[b, c] for b, c in sorted(self.broker_configs.items())]
        return bytes(cbor2.dumps(doc, canonical=True))

    @classmethod
    def from_snapshot(cls, data: bytes) -> MetadataState:
        try:
            doc = cbor2.loads(data)
            if doc["version"] not in _READABLE_SNAPSHOT_VERSIONS:
                raise SnapshotError(f"unsupported snapshot version {doc['version']!r}")
            state = cls()
            state.last_applied_index = int(doc["last_applied_index"])
            state.next_producer_id = int(doc["next_producer_id"])
            for row in doc["brokers"]:
                # Rows written before Kafka listeners were registered have 7 columns.
                bid, epoch, inc, host, port, rack, fenced, *kafka = row
                kafka_host, kafka_port = kafka if kafka else ("", -1)
                state.brokers[bid] = BrokerRegistration(
                    bid, epoch, inc, host, port, rack, fenced, kafka_host, kafka_port
                )
            for tid, name, configs in doc["topics"]:
                state.topics[tid] = TopicState(name, tid, dict(configs))
                state.topic_ids[name] = tid
                state._topic_versions[tid] = state.last_applied_index
            for tid, p, replicas, isr, leader, le, pe, *moving in doc["partitions"]:
                adding, removing = moving if moving else ((), ())
                state._set_partition(
                    (tid, p),
                    PartitionState(
                        tuple(replicas),
                        tuple(isr),
                        leader,
                        le,
                        pe,
                        tuple(adding),
                        tuple(removing),
                    ),
                )
            state.groups = GroupRegistry.from_doc(doc["groups"])
            state.classic_groups = ClassicGroupRegistry.from_doc(doc.get("classic_groups", []))
            state.topic_requests = TopicRequestLog.from_doc(doc.get("topic_requests", []))
            state.scram = ScramRegistry.from_doc(doc.get("scram", []))
            state.acls = AclRegistry.from_doc(doc.get("acls", []))
            state.transactions = TxnRegistry.from_doc(doc.get("transactions", []))
            if "feature_level" in doc:
                state.feature_level = int(doc["feature_level"])
                state.feature_level_set = True
            state.broker_max_levels = {int(b): int(v) for b, v in doc.get("broker_max_levels", [])}
            state.broker_configs = {int(b): dict(c) for b, c in doc.get("broker_configs", [])}
        except SnapshotError:
            raise
        except Exception as exc:
            raise SnapshotError(f"metadata snapshot is unreadable: {exc}") from exc
        return state
