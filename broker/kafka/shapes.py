"""Typed descriptions of the served Kafka apis' requests and responses (generated).

Written by tools/kafka_shapes.py from the installed kio and broker/kafka/api_table.py: do
not edit; run the tool. A ``...Shape`` holds, for one response entity, the union of its
fields over the served versions (entities.build drops those a version lacks and refuses
keys no version has, listed in :data:`FIELDS`); a ``...Requests`` alias is the union of the
served versions' request classes, and ``is_...`` narrows kio's request protocol to it. The
types exist for the type checker only (annotations; defining them took 0.1 s at start).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeGuard

if TYPE_CHECKING:
    import uuid
    from collections.abc import Sequence
    from typing import TypeAlias, TypedDict

    from kio.schema.add_offsets_to_txn.v0.request import AddOffsetsToTxnRequest as AddOffsetsToTxnV0
    from kio.schema.add_offsets_to_txn.v1.request import AddOffsetsToTxnRequest as AddOffsetsToTxnV1
    from kio.schema.add_offsets_to_txn.v2.request import AddOffsetsToTxnRequest as AddOffsetsToTxnV2
    from kio.schema.add_partitions_to_txn.v0.request import (
        AddPartitionsToTxnRequest as AddPartitionsToTxnV0,
    )
    from kio.schema.add_partitions_to_txn.v1.request import (
        AddPartitionsToTxnRequest as AddPartitionsToTxnV1,
    )
    from kio.schema.add_partitions_to_txn.v2.request import (
        AddPartitionsToTxnRequest as AddPartitionsToTxnV2,
    )
    from kio.schema.add_raft_voter.v0.request import AddRaftVoterRequest as AddRaftVoterV0
    from kio.schema.add_raft_voter.v1.request import AddRaftVoterRequest as AddRaftVoterV1
    from kio.schema.alter_configs.v0.request import AlterConfigsRequest as AlterConfigsV0
    from kio.schema.alter_configs.v1.request import AlterConfigsRequest as AlterConfigsV1
    from kio.schema.alter_partition_reassignments.v0.request import (
        AlterPartitionReassignmentsRequest as AlterPartitionReassignmentsV0,
    )
    from kio.schema.alter_replica_log_dirs.v1.request import (
        AlterReplicaLogDirsRequest as AlterReplicaLogDirsV1,
    )
    from kio.schema.alter_replica_log_dirs.v2.request import (
        AlterReplicaLogDirsRequest as AlterReplicaLogDirsV2,
    )
    from kio.schema.alter_user_scram_credentials.v0.request import (
        AlterUserScramCredentialsRequest as AlterUserScramCredentialsV0,
    )
    from kio.schema.api_versions.v0.request import ApiVersionsRequest as ApiVersionsV0
    from kio.schema.api_versions.v1.request import ApiVersionsRequest as ApiVersionsV1
    from kio.schema.api_versions.v2.request import ApiVersionsRequest as ApiVersionsV2
    from kio.schema.api_versions.v3.request import ApiVersionsRequest as ApiVersionsV3
    from kio.schema.api_versions.v4.request import ApiVersionsRequest as ApiVersionsV4
    from kio.schema.consumer_group_describe.v0.request import (
        ConsumerGroupDescribeRequest as ConsumerGroupDescribeV0,
    )
    from kio.schema.consumer_group_describe.v1.request import (
        ConsumerGroupDescribeRequest as ConsumerGroupDescribeV1,
    )
    from kio.schema.consumer_group_heartbeat.v0.request import (
        ConsumerGroupHeartbeatRequest as ConsumerGroupHeartbeatV0,
    )
    from kio.schema.consumer_group_heartbeat.v1.request import (
        ConsumerGroupHeartbeatRequest as ConsumerGroupHeartbeatV1,
    )
    from kio.schema.create_acls.v1.request import CreateAclsRequest as CreateAclsV1
    from kio.schema.create_acls.v2.request import CreateAclsRequest as CreateAclsV2
    from kio.schema.create_acls.v3.request import CreateAclsRequest as CreateAclsV3
    from kio.schema.create_partitions.v0.request import (
        CreatePartitionsRequest as CreatePartitionsV0,
    )
    from kio.schema.create_partitions.v1.request import (
        CreatePartitionsRequest as CreatePartitionsV1,
    )
    from kio.schema.create_topics.v2.request import CreateTopicsRequest as CreateTopicsV2
    from kio.schema.create_topics.v3.request import CreateTopicsRequest as CreateTopicsV3
    from kio.schema.create_topics.v4.request import CreateTopicsRequest as CreateTopicsV4
    from kio.schema.delete_acls.v1.request import DeleteAclsRequest as DeleteAclsV1
    from kio.schema.delete_acls.v2.request import DeleteAclsRequest as DeleteAclsV2
    from kio.schema.delete_acls.v3.request import DeleteAclsRequest as DeleteAclsV3
    from kio.schema.delete_groups.v0.request import DeleteGroupsRequest as DeleteGroupsV0
    from kio.schema.delete_groups.v1.request import DeleteGroupsRequest as DeleteGroupsV1
    from kio.schema.delete_records.v0.request import DeleteRecordsRequest as DeleteRecordsV0
    from kio.schema.delete_records.v1.request import DeleteRecordsRequest as DeleteRecordsV1
    from kio.schema.delete_topics.v1.request import DeleteTopicsRequest as DeleteTopicsV1
    from kio.schema.delete_topics.v2.request import DeleteTopicsRequest as DeleteTopicsV2
    from kio.schema.delete_topics.v3.request import DeleteTopicsRequest as DeleteTopicsV3
    from kio.schema.describe_acls.v1.request import DescribeAclsRequest as DescribeAclsV1
    from kio.schema.describe_acls.v2.request import DescribeAclsRequest as DescribeAclsV2
    from kio.schema.describe_acls.v3.request import DescribeAclsRequest as DescribeAclsV3
    from kio.schema.describe_cluster.v0.request import DescribeClusterRequest as DescribeClusterV0
    from kio.schema.describe_cluster.v1.request import DescribeClusterRequest as DescribeClusterV1
    from kio.schema.describe_configs.v1.request import DescribeConfigsRequest as DescribeConfigsV1
    from kio.schema.describe_configs.v2.request import DescribeConfigsRequest as DescribeConfigsV2
    from kio.schema.describe_configs.v3.request import DescribeConfigsRequest as DescribeConfigsV3
    from kio.schema.describe_groups.v0.request import DescribeGroupsRequest as DescribeGroupsV0
    from kio.schema.describe_groups.v1.request import DescribeGroupsRequest as DescribeGroupsV1
    from kio.schema.describe_groups.v2.request import DescribeGroupsRequest as DescribeGroupsV2
    from kio.schema.describe_groups.v3.request import DescribeGroupsRequest as DescribeGroupsV3
    from kio.schema.describe_groups.v4.request import DescribeGroupsRequest as DescribeGroupsV4
    from kio.schema.describe_log_dirs.v1.request import DescribeLogDirsRequest as DescribeLogDirsV1
    from kio.schema.describe_log_dirs.v2.request import DescribeLogDirsRequest as DescribeLogDirsV2
    from kio.schema.describe_log_dirs.v3.request import DescribeLogDirsRequest as DescribeLogDirsV3
    from kio.schema.describe_log_dirs.v4.request import DescribeLogDirsRequest as DescribeLogDirsV4
    from kio.schema.describe_producers.v0.request import (
        DescribeProducersRequest as DescribeProducersV0,
    )
    from kio.schema.describe_quorum.v0.request import DescribeQuorumRequest as DescribeQuorumV0
    from kio.schema.describe_quorum.v1.request import DescribeQuorumRequest as DescribeQuorumV1
    from kio.schema.describe_quorum.v2.request import DescribeQuorumRequest as DescribeQuorumV2
    from kio.schema.describe_topic_partitions.v0.request import (
        DescribeTopicPartitionsRequest as DescribeTopicPartitionsV0,
    )
    from kio.schema.describe_transactions.v0.request import (
        DescribeTransactionsRequest as DescribeTransactionsV0,
    )
    from kio.schema.describe_user_scram_credentials.v0.request import (
        DescribeUserScramCredentialsRequest as DescribeUserScramCredentialsV0,
    )
    from kio.schema.elect_leaders.v0.request import ElectLeadersRequest as ElectLeadersV0
    from kio.schema.elect_leaders.v1.request import ElectLeadersRequest as ElectLeadersV1
    from kio.schema.elect_leaders.v2.request import ElectLeadersRequest as ElectLeadersV2
    from kio.schema.end_txn.v0.request import EndTxnRequest as EndTxnV0
    from kio.schema.end_txn.v1.request import EndTxnRequest as EndTxnV1
    from kio.schema.end_txn.v2.request import EndTxnRequest as EndTxnV2
    from kio.schema.fetch.v4.request import FetchRequest as FetchV4
    from kio.schema.fetch.v5.request import FetchRequest as FetchV5
    from kio.schema.fetch.v6.request import FetchRequest as FetchV6
    from kio.schema.fetch.v7.request import FetchRequest as FetchV7
    from kio.schema.fetch.v8.request import FetchRequest as FetchV8
    from kio.schema.fetch.v9.request import FetchRequest as FetchV9
    from kio.schema.fetch.v10.request import FetchRequest as FetchV10
    from kio.schema.fetch.v11.request import FetchRequest as FetchV11
    from kio.schema.find_coordinator.v0.request import FindCoordinatorRequest as FindCoordinatorV0
    from kio.schema.find_coordinator.v1.request import FindCoordinatorRequest as FindCoordinatorV1
    from kio.schema.find_coordinator.v2.request import FindCoordinatorRequest as FindCoordinatorV2
    from kio.schema.find_coordinator.v3.request import FindCoordinatorRequest as FindCoordinatorV3
    from kio.schema.find_coordinator.v4.request import FindCoordinatorRequest as FindCoordinatorV4
    from kio.schema.heartbeat.v0.request import HeartbeatRequest as HeartbeatV0
    from kio.schema.heartbeat.v1.request import HeartbeatRequest as HeartbeatV1
    from kio.schema.heartbeat.v2.request import HeartbeatRequest as HeartbeatV2
    from kio.schema.heartbeat.v3.request import HeartbeatRequest as HeartbeatV3
    from kio.schema.incremental_alter_configs.v0.request import (
        IncrementalAlterConfigsRequest as IncrementalAlterConfigsV0,
    )
    from kio.schema.incremental_alter_configs.v1.request import (
        IncrementalAlterConfigsRequest as IncrementalAlterConfigsV1,
    )
    from kio.schema.init_producer_id.v0.request import InitProducerIdRequest as InitProducerIdV0
    from kio.schema.init_producer_id.v1.request import InitProducerIdRequest as InitProducerIdV1
    from kio.schema.join_group.v0.request import JoinGroupRequest as JoinGroupV0
    from kio.schema.join_group.v1.request import JoinGroupRequest as JoinGroupV1
    from kio.schema.join_group.v2.request import JoinGroupRequest as JoinGroupV2
    from kio.schema.join_group.v3.request import JoinGroupRequest as JoinGroupV3
    from kio.schema.join_group.v4.request import JoinGroupRequest as JoinGroupV4
    from kio.schema.join_group.v5.request import JoinGroupRequest as JoinGroupV5
    from kio.schema.leave_group.v0.request import LeaveGroupRequest as LeaveGroupV0
    from kio.schema.leave_group.v1.request import LeaveGroupRequest as LeaveGroupV1
    from kio.schema.list_config_resources.v0.request import (
        ListConfigResourcesRequest as ListConfigResourcesV0,
    )
    from kio.schema.list_config_resources.v1.request import (
        ListConfigResourcesRequest as ListConfigResourcesV1,
    )
    from kio.schema.list_groups.v0.request import ListGroupsRequest as ListGroupsV0
    from kio.schema.list_groups.v1.request import ListGroupsRequest as ListGroupsV1
    from kio.schema.list_groups.v2.request import ListGroupsRequest as ListGroupsV2
    from kio.schema.list_offsets.v1.request import ListOffsetsRequest as ListOffsetsV1
    from kio.schema.list_offsets.v2.request import ListOffsetsRequest as ListOffsetsV2
    from kio.schema.list_offsets.v3.request import ListOffsetsRequest as ListOffsetsV3
    from kio.schema.list_offsets.v4.request import ListOffsetsRequest as ListOffsetsV4
    from kio.schema.list_offsets.v5.request import ListOffsetsRequest as ListOffsetsV5
    from kio.schema.list_offsets.v6.request import ListOffsetsRequest as ListOffsetsV6
    from kio.schema.list_offsets.v7.request import ListOffsetsRequest as ListOffsetsV7
    from kio.schema.list_offsets.v8.request import ListOffsetsRequest as ListOffsetsV8
    from kio.schema.list_offsets.v9.request import ListOffsetsRequest as ListOffsetsV9
    from kio.schema.list_partition_reassignments.v0.request import (
        ListPartitionReassignmentsRequest as ListPartitionReassignmentsV0,
    )
    from kio.schema.list_transactions.v0.request import (
        ListTransactionsRequest as ListTransactionsV0,
    )
    from kio.schema.metadata.v1.request import MetadataRequest as MetadataV1
    from kio.schema.metadata.v2.request import MetadataRequest as MetadataV2
    from kio.schema.metadata.v3.request import MetadataRequest as MetadataV3
    from kio.schema.metadata.v4.request import MetadataRequest as MetadataV4
    from kio.schema.metadata.v5.request import MetadataRequest as MetadataV5
    from kio.schema.metadata.v6.request import MetadataRequest as MetadataV6
    from kio.schema.metadata.v7.request import MetadataRequest as MetadataV7
    from kio.schema.metadata.v8.request import MetadataRequest as MetadataV8
    from kio.schema.metadata.v9.request import MetadataRequest as MetadataV9
    from kio.schema.metadata.v10.request import MetadataRequest as MetadataV10
    from kio.schema.metadata.v11.request import MetadataRequest as MetadataV11
    from kio.schema.metadata.v12.request import MetadataRequest as MetadataV12
    from kio.schema.offset_commit.v2.request import OffsetCommitRequest as OffsetCommitV2
    from kio.schema.offset_commit.v3.request import OffsetCommitRequest as OffsetCommitV3
    from kio.schema.offset_commit.v4.request import OffsetCommitRequest as OffsetCommitV4
    from kio.schema.offset_commit.v5.request import OffsetCommitRequest as OffsetCommitV5
    from kio.schema.offset_commit.v6.request import OffsetCommitRequest as OffsetCommitV6
    from kio.schema.offset_commit.v7.request import OffsetCommitRequest as OffsetCommitV7
    from kio.schema.offset_delete.v0.request import OffsetDeleteRequest as OffsetDeleteV0
    from kio.schema.offset_fetch.v1.request import OffsetFetchRequest as OffsetFetchV1
    from kio.schema.offset_fetch.v2.request import OffsetFetchRequest as OffsetFetchV2
    from kio.schema.offset_fetch.v3.request import OffsetFetchRequest as OffsetFetchV3
    from kio.schema.offset_fetch.v4.request import OffsetFetchRequest as OffsetFetchV4
    from kio.schema.offset_fetch.v5.request import OffsetFetchRequest as OffsetFetchV5
    from kio.schema.offset_fetch.v6.request import OffsetFetchRequest as OffsetFetchV6
    from kio.schema.offset_fetch.v7.request import OffsetFetchRequest as OffsetFetchV7
    from kio.schema.offset_fetch.v8.request import OffsetFetchRequest as OffsetFetchV8
    from kio.schema.offset_for_leader_epoch.v2.request import (
        OffsetForLeaderEpochRequest as OffsetForLeaderEpochV2,
    )
    from kio.schema.offset_for_leader_epoch.v3.request import (
        OffsetForLeaderEpochRequest as OffsetForLeaderEpochV3,
    )
    from kio.schema.produce.v3.request import ProduceRequest as ProduceV3
    from kio.schema.produce.v4.request import ProduceRequest as ProduceV4
    from kio.schema.produce.v5.request import ProduceRequest as ProduceV5
    from kio.schema.produce.v6.request import ProduceRequest as ProduceV6
    from kio.schema.produce.v7.request import ProduceRequest as ProduceV7
    from kio.schema.produce.v8.request import ProduceRequest as ProduceV8
    from kio.schema.remove_raft_voter.v0.request import RemoveRaftVoterRequest as RemoveRaftVoterV0
    from kio.schema.sasl_authenticate.v0.request import (
        SaslAuthenticateRequest as SaslAuthenticateV0,
    )
    from kio.schema.sasl_authenticate.v1.request import (
        SaslAuthenticateRequest as SaslAuthenticateV1,
    )
    from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest as SaslHandshakeV1
    from kio.schema.sync_group.v0.request import SyncGroupRequest as SyncGroupV0
    from kio.schema.sync_group.v1.request import SyncGroupRequest as SyncGroupV1
    from kio.schema.sync_group.v2.request import SyncGroupRequest as SyncGroupV2
    from kio.schema.sync_group.v3.request import SyncGroupRequest as SyncGroupV3
    from kio.schema.txn_offset_commit.v0.request import TxnOffsetCommitRequest as TxnOffsetCommitV0
    from kio.schema.txn_offset_commit.v1.request import TxnOffsetCommitRequest as TxnOffsetCommitV1
    from kio.schema.txn_offset_commit.v2.request import TxnOffsetCommitRequest as TxnOffsetCommitV2
    from kio.schema.txn_offset_commit.v3.request import TxnOffsetCommitRequest as TxnOffsetCommitV3
    from kio.schema.unregister_broker.v0.request import (
        UnregisterBrokerRequest as UnregisterBrokerV0,
    )
    from kio.schema.update_features.v0.request import UpdateFeaturesRequest as UpdateFeaturesV0
    from kio.schema.update_features.v1.request import UpdateFeaturesRequest as UpdateFeaturesV1
    from kio.schema.update_features.v2.request import UpdateFeaturesRequest as UpdateFeaturesV2
    from kio.schema.write_txn_markers.v1.request import WriteTxnMarkersRequest as WriteTxnMarkersV1
    from kio.static.protocol import RequestPayload

    ProduceRequests: TypeAlias = (
        ProduceV3 | ProduceV4 | ProduceV5 | ProduceV6 | ProduceV7 | ProduceV8
    )

    FetchRequests: TypeAlias = (
        FetchV4 | FetchV5 | FetchV6 | FetchV7 | FetchV8 | FetchV9 | FetchV10 | FetchV11
    )

    ListOffsetsRequests: TypeAlias = (
        ListOffsetsV1
        | ListOffsetsV2
        | ListOffsetsV3
        | ListOffsetsV4
        | ListOffsetsV5
        | ListOffsetsV6
        | ListOffsetsV7
        | ListOffsetsV8
        | ListOffsetsV9
    )

    MetadataRequests: TypeAlias = (
        MetadataV1
        | MetadataV2
        | MetadataV3
        | MetadataV4
        | MetadataV5
        | MetadataV6
        | MetadataV7
        | MetadataV8
        | MetadataV9
        | MetadataV10
        | MetadataV11
        | MetadataV12
    )

    OffsetCommitRequests: TypeAlias = (
        OffsetCommitV2
        | OffsetCommitV3
        | OffsetCommitV4
        | OffsetCommitV5
        | OffsetCommitV6
        | OffsetCommitV7
    )

    OffsetFetchRequests: TypeAlias = (
        OffsetFetchV1
        | OffsetFetchV2
        | OffsetFetchV3
        | OffsetFetchV4
        | OffsetFetchV5
        | OffsetFetchV6
        | OffsetFetchV7
        | OffsetFetchV8
    )

    FindCoordinatorRequests: TypeAlias = (
        FindCoordinatorV0
        | FindCoordinatorV1
        | FindCoordinatorV2
        | FindCoordinatorV3
        | FindCoordinatorV4
    )

    JoinGroupRequests: TypeAlias = (
        JoinGroupV0 | JoinGroupV1 | JoinGroupV2 | JoinGroupV3 | JoinGroupV4 | JoinGroupV5
    )

    HeartbeatRequests: TypeAlias = HeartbeatV0 | HeartbeatV1 | HeartbeatV2 | HeartbeatV3

    LeaveGroupRequests: TypeAlias = LeaveGroupV0 | LeaveGroupV1

    SyncGroupRequests: TypeAlias = SyncGroupV0 | SyncGroupV1 | SyncGroupV2 | SyncGroupV3

    DescribeGroupsRequests: TypeAlias = (
        DescribeGroupsV0 | DescribeGroupsV1 | DescribeGroupsV2 | DescribeGroupsV3 | DescribeGroupsV4
    )

    ListGroupsRequests: TypeAlias = ListGroupsV0 | ListGroupsV1 | ListGroupsV2

    SaslHandshakeRequests: TypeAlias = SaslHandshakeV1

    ApiVersionsRequests: TypeAlias = (
        ApiVersionsV0 | ApiVersionsV1 | ApiVersionsV2 | ApiVersionsV3 | ApiVersionsV4
    )

    CreateTopicsRequests: TypeAlias = CreateTopicsV2 | CreateTopicsV3 | CreateTopicsV4

    DeleteTopicsRequests: TypeAlias = DeleteTopicsV1 | DeleteTopicsV2 | DeleteTopicsV3

    DeleteRecordsRequests: TypeAlias = DeleteRecordsV0 | DeleteRecordsV1

    InitProducerIdRequests: TypeAlias = InitProducerIdV0 | InitProducerIdV1

    OffsetForLeaderEpochRequests: TypeAlias = OffsetForLeaderEpochV2 | OffsetForLeaderEpochV3

    AddPartitionsToTxnRequests: TypeAlias = (
        AddPartitionsToTxnV0 | AddPartitionsToTxnV1 | AddPartitionsToTxnV2
    )

    AddOffsetsToTxnRequests: TypeAlias = AddOffsetsToTxnV0 | AddOffsetsToTxnV1 | AddOffsetsToTxnV2

    EndTxnRequests: TypeAlias = EndTxnV0 | EndTxnV1 | EndTxnV2

    WriteTxnMarkersRequests: TypeAlias = WriteTxnMarkersV1

    TxnOffsetCommitRequests: TypeAlias = (
        TxnOffsetCommitV0 | TxnOffsetCommitV1 | TxnOffsetCommitV2 | TxnOffsetCommitV3
    )

    DescribeAclsRequests: TypeAlias = DescribeAclsV1 | DescribeAclsV2 | DescribeAclsV3

    CreateAclsRequests: TypeAlias = CreateAclsV1 | CreateAclsV2 | CreateAclsV3

    DeleteAclsRequests: TypeAlias = DeleteAclsV1 | DeleteAclsV2 | DeleteAclsV3

    DescribeConfigsRequests: TypeAlias = DescribeConfigsV1 | DescribeConfigsV2 | DescribeConfigsV3

    AlterConfigsRequests: TypeAlias = AlterConfigsV0 | AlterConfigsV1

    AlterReplicaLogDirsRequests: TypeAlias = AlterReplicaLogDirsV1 | AlterReplicaLogDirsV2

    DescribeLogDirsRequests: TypeAlias = (
        DescribeLogDirsV1 | DescribeLogDirsV2 | DescribeLogDirsV3 | DescribeLogDirsV4
    )

    SaslAuthenticateRequests: TypeAlias = SaslAuthenticateV0 | SaslAuthenticateV1

    CreatePartitionsRequests: TypeAlias = CreatePartitionsV0 | CreatePartitionsV1

    DeleteGroupsRequests: TypeAlias = DeleteGroupsV0 | DeleteGroupsV1

    ElectLeadersRequests: TypeAlias = ElectLeadersV0 | ElectLeadersV1 | ElectLeadersV2

    IncrementalAlterConfigsRequests: TypeAlias = (
        IncrementalAlterConfigsV0 | IncrementalAlterConfigsV1
    )

    AlterPartitionReassignmentsRequests: TypeAlias = AlterPartitionReassignmentsV0

    ListPartitionReassignmentsRequests: TypeAlias = ListPartitionReassignmentsV0

    OffsetDeleteRequests: TypeAlias = OffsetDeleteV0

    DescribeUserScramCredentialsRequests: TypeAlias = DescribeUserScramCredentialsV0

    AlterUserScramCredentialsRequests: TypeAlias = AlterUserScramCredentialsV0

    DescribeQuorumRequests: TypeAlias = DescribeQuorumV0 | DescribeQuorumV1 | DescribeQuorumV2

    UpdateFeaturesRequests: TypeAlias = UpdateFeaturesV0 | UpdateFeaturesV1 | UpdateFeaturesV2

    DescribeClusterRequests: TypeAlias = DescribeClusterV0 | DescribeClusterV1

    DescribeProducersRequests: TypeAlias = DescribeProducersV0

    UnregisterBrokerRequests: TypeAlias = UnregisterBrokerV0

    DescribeTransactionsRequests: TypeAlias = DescribeTransactionsV0

    ListTransactionsRequests: TypeAlias = ListTransactionsV0

    ConsumerGroupHeartbeatRequests: TypeAlias = ConsumerGroupHeartbeatV0 | ConsumerGroupHeartbeatV1

    ConsumerGroupDescribeRequests: TypeAlias = ConsumerGroupDescribeV0 | ConsumerGroupDescribeV1

    ListConfigResourcesRequests: TypeAlias = ListConfigResourcesV0 | ListConfigResourcesV1

    DescribeTopicPartitionsRequests: TypeAlias = DescribeTopicPartitionsV0

    AddRaftVoterRequests: TypeAlias = AddRaftVoterV0 | AddRaftVoterV1

    RemoveRaftVoterRequests: TypeAlias = RemoveRaftVoterV0

    class ProduceResponseShape(TypedDict, total=False):
        responses: Sequence[ProduceTopicProduceResponseShape]
        throttle_time: int

    class ProduceTopicProduceResponseShape(TypedDict, total=False):
        name: str
        partition_responses: Sequence[ProducePartitionProduceResponseShape]

    class ProducePartitionProduceResponseShape(TypedDict, total=False):
        index: int
        error_code: int
        base_offset: int
        log_append_time: int | None
        log_start_offset: int
        record_errors: Sequence[ProduceBatchIndexAndErrorMessageShape]
        error_message: str | None

    class ProduceBatchIndexAndErrorMessageShape(TypedDict, total=False):
        batch_index: int
        batch_index_error_message: str | None

    class FetchResponseShape(TypedDict, total=False):
        throttle_time: int
        responses: Sequence[FetchableTopicResponseShape]
        error_code: int
        session_id: int

    class FetchableTopicResponseShape(TypedDict, total=False):
        topic: str
        partitions: Sequence[FetchPartitionDataShape]

    class FetchPartitionDataShape(TypedDict, total=False):
        partition_index: int
        error_code: int
        high_watermark: int
        last_stable_offset: int
        aborted_transactions: Sequence[FetchAbortedTransactionShape] | None
        records: bytes | None
        log_start_offset: int
        preferred_read_replica: int

    class FetchAbortedTransactionShape(TypedDict, total=False):
        producer_id: int
        first_offset: int

    class ListOffsetsResponseShape(TypedDict, total=False):
        topics: Sequence[ListOffsetsTopicResponseShape]
        throttle_time: int

    class ListOffsetsTopicResponseShape(TypedDict, total=False):
        name: str
        partitions: Sequence[ListOffsetsPartitionResponseShape]

    class ListOffsetsPartitionResponseShape(TypedDict, total=False):
        partition_index: int
        error_code: int
        timestamp: int
        offset: int
        leader_epoch: int

    class MetadataResponseShape(TypedDict, total=False):
        brokers: Sequence[MetadataResponseBrokerShape]
        controller_id: int
        topics: Sequence[MetadataResponseTopicShape]
        cluster_id: str | None
        throttle_time: int
        cluster_authorized_operations: int

    class MetadataResponseBrokerShape(TypedDict, total=False):
        node_id: int
        host: str
        port: int
        rack: str | None

    class MetadataResponseTopicShape(TypedDict, total=False):
        error_code: int
        name: str | None
        is_internal: bool
        partitions: Sequence[MetadataResponsePartitionShape]
        topic_authorized_operations: int
        topic_id: uuid.UUID | None

    class MetadataResponsePartitionShape(TypedDict, total=False):
        error_code: int
        partition_index: int
        leader_id: int
        replica_nodes: Sequence[int]
        isr_nodes: Sequence[int]
        offline_replicas: Sequence[int]
        leader_epoch: int

    class OffsetCommitResponseShape(TypedDict, total=False):
        topics: Sequence[OffsetCommitResponseTopicShape]
        throttle_time: int

    class OffsetCommitResponseTopicShape(TypedDict, total=False):
        name: str
        partitions: Sequence[OffsetCommitResponsePartitionShape]

    class OffsetCommitResponsePartitionShape(TypedDict, total=False):
        partition_index: int
        error_code: int

    class OffsetFetchResponseShape(TypedDict, total=False):
        topics: Sequence[OffsetFetchResponseTopicShape]
        error_code: int
        throttle_time: int
        groups: Sequence[OffsetFetchResponseGroupShape]

    class OffsetFetchResponseTopicShape(TypedDict, total=False):
        name: str
        partitions: Sequence[OffsetFetchResponsePartitionShape]

    class OffsetFetchResponsePartitionShape(TypedDict, total=False):
        partition_index: int
        committed_offset: int
        metadata: str | None
        error_code: int
        committed_leader_epoch: int

    class OffsetFetchResponseGroupShape(TypedDict, total=False):
        group_id: str
        topics: Sequence[OffsetFetchResponseTopicsShape]
        error_code: int

    class OffsetFetchResponseTopicsShape(TypedDict, total=False):
        name: str
        partitions: Sequence[OffsetFetchResponsePartitionsShape]

    class OffsetFetchResponsePartitionsShape(TypedDict, total=False):
        partition_index: int
        committed_offset: int
        committed_leader_epoch: int
        metadata: str | None
        error_code: int

    class FindCoordinatorResponseShape(TypedDict, total=False):
        error_code: int
        node_id: int
        host: str
        port: int
        throttle_time: int
        error_message: str | None
        coordinators: Sequence[FindCoordinatorCoordinatorShape]

    class FindCoordinatorCoordinatorShape(TypedDict, total=False):
        key: str
        node_id: int
        host: str
        port: int
        error_code: int
        error_message: str | None

    class JoinGroupResponseShape(TypedDict, total=False):
        error_code: int
        generation_id: int
        protocol_name: str
        leader: str
        member_id: str
        members: Sequence[JoinGroupResponseMemberShape]
        throttle_time: int

    class JoinGroupResponseMemberShape(TypedDict, total=False):
        member_id: str
        metadata: bytes
        group_instance_id: str | None

    class HeartbeatResponseShape(TypedDict, total=False):
        error_code: int
        throttle_time: int

    class LeaveGroupResponseShape(TypedDict, total=False):
        error_code: int
        throttle_time: int

    class SyncGroupResponseShape(TypedDict, total=False):
        error_code: int
        assignment: bytes
        throttle_time: int

    class DescribeGroupsResponseShape(TypedDict, total=False):
        groups: Sequence[DescribeGroupsDescribedGroupShape]
        throttle_time: int

    class DescribeGroupsDescribedGroupShape(TypedDict, total=False):
        error_code: int
        group_id: str
        group_state: str
        protocol_type: str
        protocol_data: str
        members: Sequence[DescribeGroupsDescribedGroupMemberShape]
        authorized_operations: int

    class DescribeGroupsDescribedGroupMemberShape(TypedDict, total=False):
        member_id: str
        client_id: str
        client_host: str
        member_metadata: bytes
        member_assignment: bytes
        group_instance_id: str | None

    class ListGroupsResponseShape(TypedDict, total=False):
        error_code: int
        groups: Sequence[ListGroupsListedGroupShape]
        throttle_time: int

    class ListGroupsListedGroupShape(TypedDict, total=False):
        group_id: str
        protocol_type: str

    class SaslHandshakeResponseShape(TypedDict, total=False):
        error_code: int
        mechanisms: Sequence[str]

    class ApiVersionsResponseShape(TypedDict, total=False):
        error_code: int
        api_keys: Sequence[ApiVersionsApiVersionShape]
        throttle_time: int
        supported_features: Sequence[ApiVersionsSupportedFeatureKeyShape]
        finalized_features_epoch: int
        finalized_features: Sequence[ApiVersionsFinalizedFeatureKeyShape]
        zk_migration_ready: bool

    class ApiVersionsApiVersionShape(TypedDict, total=False):
        api_key: int
        min_version: int
        max_version: int

    class ApiVersionsSupportedFeatureKeyShape(TypedDict, total=False):
        name: str
        min_version: int
        max_version: int

    class ApiVersionsFinalizedFeatureKeyShape(TypedDict, total=False):
        name: str
        max_version_level: int
        min_version_level: int

    class CreateTopicsResponseShape(TypedDict, total=False):
        throttle_time: int
        topics: Sequence[CreateTopicsCreatableTopicResultShape]

    class CreateTopicsCreatableTopicResultShape(TypedDict, total=False):
        name: str
        error_code: int
        error_message: str | None

    class DeleteTopicsResponseShape(TypedDict, total=False):
        throttle_time: int
        responses: Sequence[DeleteTopicsDeletableTopicResultShape]

    class DeleteTopicsDeletableTopicResultShape(TypedDict, total=False):
        name: str
        error_code: int

    class DeleteRecordsResponseShape(TypedDict, total=False):
        throttle_time: int
        topics: Sequence[DeleteRecordsTopicResultShape]

    class DeleteRecordsTopicResultShape(TypedDict, total=False):
        name: str
        partitions: Sequence[DeleteRecordsPartitionResultShape]

    class DeleteRecordsPartitionResultShape(TypedDict, total=False):
        partition_index: int
        low_watermark: int
        error_code: int

    class InitProducerIdResponseShape(TypedDict, total=False):
        throttle_time: int
        error_code: int
        producer_id: int
        producer_epoch: int

    class OffsetForLeaderEpochResponseShape(TypedDict, total=False):
        throttle_time: int
        topics: Sequence[OffsetForLeaderEpochOffsetForLeaderTopicResultShape]

    class OffsetForLeaderEpochOffsetForLeaderTopicResultShape(TypedDict, total=False):
        topic: str
        partitions: Sequence[OffsetForLeaderEpochEpochEndOffsetShape]

    class OffsetForLeaderEpochEpochEndOffsetShape(TypedDict, total=False):
        error_code: int
        partition: int
        leader_epoch: int
        end_offset: int

    class AddPartitionsToTxnResponseShape(TypedDict, total=False):
        throttle_time: int
        results_by_topic_v3_and_below: Sequence[AddPartitionsToTxnTopicResultShape]

    class AddPartitionsToTxnTopicResultShape(TypedDict, total=False):
        name: str
        results_by_partition: Sequence[AddPartitionsToTxnPartitionResultShape]

    class AddPartitionsToTxnPartitionResultShape(TypedDict, total=False):
        partition_index: int
        partition_error_code: int

    class AddOffsetsToTxnResponseShape(TypedDict, total=False):
        throttle_time: int
        error_code: int

    class EndTxnResponseShape(TypedDict, total=False):
        throttle_time: int
        error_code: int

    class WriteTxnMarkersResponseShape(TypedDict, total=False):
        markers: Sequence[WriteTxnMarkersWritableTxnMarkerResultShape]

    class WriteTxnMarkersWritableTxnMarkerResultShape(TypedDict, total=False):
        producer_id: int
        topics: Sequence[WriteTxnMarkersWritableTxnMarkerTopicResultShape]

    class WriteTxnMarkersWritableTxnMarkerTopicResultShape(TypedDict, total=False):
        name: str
        partitions: Sequence[WriteTxnMarkersWritableTxnMarkerPartitionResultShape]

    class WriteTxnMarkersWritableTxnMarkerPartitionResultShape(TypedDict, total=False):
        partition_index: int
        error_code: int

    class TxnOffsetCommitResponseShape(TypedDict, total=False):
        throttle_time: int
        topics: Sequence[TxnOffsetCommitResponseTopicShape]

    class TxnOffsetCommitResponseTopicShape(TypedDict, total=False):
        name: str
        partitions: Sequence[TxnOffsetCommitResponsePartitionShape]

    class TxnOffsetCommitResponsePartitionShape(TypedDict, total=False):
        partition_index: int
        error_code: int

    class DescribeAclsResponseShape(TypedDict, total=False):
        throttle_time: int
        error_code: int
        error_message: str | None
        resources: Sequence[DescribeAclsResourceShape]

    class DescribeAclsResourceShape(TypedDict, total=False):
        resource_type: int
        resource_name: str
        pattern_type: int
        acls: Sequence[DescribeAclsAclDescriptionShape]

    class DescribeAclsAclDescriptionShape(TypedDict, total=False):
        principal: str
        host: str
        operation: int
        permission_type: int

    class CreateAclsResponseShape(TypedDict, total=False):
        throttle_time: int
        results: Sequence[CreateAclsAclCreationResultShape]

    class CreateAclsAclCreationResultShape(TypedDict, total=False):
        error_code: int
        error_message: str | None

    class DeleteAclsResponseShape(TypedDict, total=False):
        throttle_time: int
        filter_results: Sequence[DeleteAclsFilterResultShape]

    class DeleteAclsFilterResultShape(TypedDict, total=False):
        error_code: int
        error_message: str | None
        matching_acls: Sequence[DeleteAclsMatchingAclShape]

    class DeleteAclsMatchingAclShape(TypedDict, total=False):
        error_code: int
        error_message: str | None
        resource_type: int
        resource_name: str
        pattern_type: int
        principal: str
        host: str
        operation: int
        permission_type: int

    class DescribeConfigsResponseShape(TypedDict, total=False):
        throttle_time: int
        results: Sequence[DescribeConfigsResultShape]

    class DescribeConfigsResultShape(TypedDict, total=False):
        error_code: int
        error_message: str | None
        resource_type: int
        resource_name: str
        configs: Sequence[DescribeConfigsResourceResultShape]

    class DescribeConfigsResourceResultShape(TypedDict, total=False):
        name: str
        value: str | None
        read_only: bool
        config_source: int
        is_sensitive: bool
        synonyms: Sequence[DescribeConfigsSynonymShape]
        config_type: int
        documentation: str | None

    class DescribeConfigsSynonymShape(TypedDict, total=False):
        name: str
        value: str | None
        source: int

    class AlterConfigsResponseShape(TypedDict, total=False):
        throttle_time: int
        responses: Sequence[AlterConfigsResourceResponseShape]

    class AlterConfigsResourceResponseShape(TypedDict, total=False):
        error_code: int
        error_message: str | None
        resource_type: int
        resource_name: str

    class AlterReplicaLogDirsResponseShape(TypedDict, total=False):
        throttle_time: int
        results: Sequence[AlterReplicaLogDirsAlterReplicaLogDirTopicResultShape]

    class AlterReplicaLogDirsAlterReplicaLogDirTopicResultShape(TypedDict, total=False):
        topic_name: str
        partitions: Sequence[AlterReplicaLogDirsAlterReplicaLogDirPartitionResultShape]

    class AlterReplicaLogDirsAlterReplicaLogDirPartitionResultShape(TypedDict, total=False):
        partition_index: int
        error_code: int

    class DescribeLogDirsResponseShape(TypedDict, total=False):
        throttle_time: int
        results: Sequence[DescribeLogDirsResultShape]
        error_code: int

    class DescribeLogDirsResultShape(TypedDict, total=False):
        error_code: int
        log_dir: str
        topics: Sequence[DescribeLogDirsTopicShape]
        total_bytes: int
        usable_bytes: int

    class DescribeLogDirsTopicShape(TypedDict, total=False):
        name: str
        partitions: Sequence[DescribeLogDirsPartitionShape]

    class DescribeLogDirsPartitionShape(TypedDict, total=False):
        partition_index: int
        partition_size: int
        offset_lag: int
        is_future_key: bool

    class SaslAuthenticateResponseShape(TypedDict, total=False):
        error_code: int
        error_message: str | None
        auth_bytes: bytes
        session_lifetime: int

    class CreatePartitionsResponseShape(TypedDict, total=False):
        throttle_time: int
        results: Sequence[CreatePartitionsTopicResultShape]

    class CreatePartitionsTopicResultShape(TypedDict, total=False):
        name: str
        error_code: int
        error_message: str | None

    class DeleteGroupsResponseShape(TypedDict, total=False):
        throttle_time: int
        results: Sequence[DeleteGroupsDeletableGroupResultShape]

    class DeleteGroupsDeletableGroupResultShape(TypedDict, total=False):
        group_id: str
        error_code: int

    class ElectLeadersResponseShape(TypedDict, total=False):
        throttle_time: int
        replica_election_results: Sequence[ElectLeadersReplicaElectionResultShape]
        error_code: int

    class ElectLeadersReplicaElectionResultShape(TypedDict, total=False):
        topic: str
        partition_result: Sequence[ElectLeadersPartitionResultShape]

    class ElectLeadersPartitionResultShape(TypedDict, total=False):
        partition_id: int
        error_code: int
        error_message: str | None

    class IncrementalAlterConfigsResponseShape(TypedDict, total=False):
        throttle_time: int
        responses: Sequence[IncrementalAlterConfigsAlterConfigsResourceResponseShape]

    class IncrementalAlterConfigsAlterConfigsResourceResponseShape(TypedDict, total=False):
        error_code: int
        error_message: str | None
        resource_type: int
        resource_name: str

    class AlterPartitionReassignmentsResponseShape(TypedDict, total=False):
        throttle_time: int
        error_code: int
        error_message: str | None
        responses: Sequence[AlterPartitionReassignmentsReassignableTopicResponseShape]

    class AlterPartitionReassignmentsReassignableTopicResponseShape(TypedDict, total=False):
        name: str
        partitions: Sequence[AlterPartitionReassignmentsReassignablePartitionResponseShape]

    class AlterPartitionReassignmentsReassignablePartitionResponseShape(TypedDict, total=False):
        partition_index: int
        error_code: int
        error_message: str | None

    class ListPartitionReassignmentsResponseShape(TypedDict, total=False):
        throttle_time: int
        error_code: int
        error_message: str | None
        topics: Sequence[ListPartitionReassignmentsOngoingTopicReassignmentShape]

    class ListPartitionReassignmentsOngoingTopicReassignmentShape(TypedDict, total=False):
        name: str
        partitions: Sequence[ListPartitionReassignmentsOngoingPartitionReassignmentShape]

    class ListPartitionReassignmentsOngoingPartitionReassignmentShape(TypedDict, total=False):
        partition_index: int
        replicas: Sequence[int]
        adding_replicas: Sequence[int]
        removing_replicas: Sequence[int]

    class OffsetDeleteResponseShape(TypedDict, total=False):
        error_code: int
        throttle_time: int
        topics: Sequence[OffsetDeleteResponseTopicShape]

    class OffsetDeleteResponseTopicShape(TypedDict, total=False):
        name: str
        partitions: Sequence[OffsetDeleteResponsePartitionShape]

    class OffsetDeleteResponsePartitionShape(TypedDict, total=False):
        partition_index: int
        error_code: int

    class DescribeUserScramCredentialsResponseShape(TypedDict, total=False):
        throttle_time: int
        error_code: int
        error_message: str | None
        results: Sequence[DescribeUserScramCredentialsResultShape]

    class DescribeUserScramCredentialsResultShape(TypedDict, total=False):
        user: str
        error_code: int
        error_message: str | None
        credential_infos: Sequence[DescribeUserScramCredentialsCredentialInfoShape]

    class DescribeUserScramCredentialsCredentialInfoShape(TypedDict, total=False):
        mechanism: int
        iterations: int

    class AlterUserScramCredentialsResponseShape(TypedDict, total=False):
        throttle_time: int
        results: Sequence[AlterUserScramCredentialsResultShape]

    class AlterUserScramCredentialsResultShape(TypedDict, total=False):
        user: str
        error_code: int
        error_message: str | None

    class DescribeQuorumResponseShape(TypedDict, total=False):
        error_code: int
        topics: Sequence[DescribeQuorumTopicDataShape]
        error_message: str | None
        nodes: Sequence[DescribeQuorumNodeShape]

    class DescribeQuorumTopicDataShape(TypedDict, total=False):
        topic_name: str
        partitions: Sequence[DescribeQuorumPartitionDataShape]

    class DescribeQuorumPartitionDataShape(TypedDict, total=False):
        partition_index: int
        error_code: int
        leader_id: int
        leader_epoch: int
        high_watermark: int
        current_voters: Sequence[DescribeQuorumReplicaStateShape]
        observers: Sequence[DescribeQuorumReplicaStateShape]
        error_message: str | None

    class DescribeQuorumReplicaStateShape(TypedDict, total=False):
        replica_id: int
        log_end_offset: int
        last_fetch_timestamp: int
        last_caught_up_timestamp: int
        replica_directory_id: uuid.UUID | None

    class DescribeQuorumNodeShape(TypedDict, total=False):
        node_id: int
        listeners: Sequence[DescribeQuorumListenerShape]

    class DescribeQuorumListenerShape(TypedDict, total=False):
        name: str
        host: str
        port: int

    class UpdateFeaturesResponseShape(TypedDict, total=False):
        throttle_time: int
        error_code: int
        error_message: str | None
        results: Sequence[UpdateFeaturesUpdatableFeatureResultShape]

    class UpdateFeaturesUpdatableFeatureResultShape(TypedDict, total=False):
        feature: str
        error_code: int
        error_message: str | None

    class DescribeClusterResponseShape(TypedDict, total=False):
        throttle_time: int
        error_code: int
        error_message: str | None
        cluster_id: str
        controller_id: int
        brokers: Sequence[DescribeClusterBrokerShape]
        cluster_authorized_operations: int
        endpoint_type: int

    class DescribeClusterBrokerShape(TypedDict, total=False):
        broker_id: int
        host: str
        port: int
        rack: str | None

    class DescribeProducersResponseShape(TypedDict, total=False):
        throttle_time: int
        topics: Sequence[DescribeProducersTopicResponseShape]

    class DescribeProducersTopicResponseShape(TypedDict, total=False):
        name: str
        partitions: Sequence[DescribeProducersPartitionResponseShape]

    class DescribeProducersPartitionResponseShape(TypedDict, total=False):
        partition_index: int
        error_code: int
        error_message: str | None
        active_producers: Sequence[DescribeProducersProducerStateShape]

    class DescribeProducersProducerStateShape(TypedDict, total=False):
        producer_id: int
        producer_epoch: int
        last_sequence: int
        last_timestamp: int
        coordinator_epoch: int
        current_txn_start_offset: int

    class UnregisterBrokerResponseShape(TypedDict, total=False):
        throttle_time: int
        error_code: int
        error_message: str | None

    class DescribeTransactionsResponseShape(TypedDict, total=False):
        throttle_time: int
        transaction_states: Sequence[DescribeTransactionsTransactionStateShape]

    class DescribeTransactionsTransactionStateShape(TypedDict, total=False):
        error_code: int
        transactional_id: str
        transaction_state: str
        transaction_timeout: int
        transaction_start_time: int
        producer_id: int
        producer_epoch: int
        topics: Sequence[DescribeTransactionsTopicDataShape]

    class DescribeTransactionsTopicDataShape(TypedDict, total=False):
        topic: str
        partitions: Sequence[int]

    class ListTransactionsResponseShape(TypedDict, total=False):
        throttle_time: int
        error_code: int
        unknown_state_filters: Sequence[str]
        transaction_states: Sequence[ListTransactionsTransactionStateShape]

    class ListTransactionsTransactionStateShape(TypedDict, total=False):
        transactional_id: str
        producer_id: int
        transaction_state: str

    class ConsumerGroupHeartbeatResponseShape(TypedDict, total=False):
        throttle_time: int
        error_code: int
        error_message: str | None
        member_id: str | None
        member_epoch: int
        heartbeat_interval: int
        assignment: ConsumerGroupHeartbeatAssignmentShape | None

    class ConsumerGroupHeartbeatAssignmentShape(TypedDict, total=False):
        topic_partitions: Sequence[ConsumerGroupHeartbeatTopicPartitionsShape]

    class ConsumerGroupHeartbeatTopicPartitionsShape(TypedDict, total=False):
        topic_id: uuid.UUID | None
        partitions: Sequence[int]

    class ConsumerGroupDescribeResponseShape(TypedDict, total=False):
        throttle_time: int
        groups: Sequence[ConsumerGroupDescribeDescribedGroupShape]

    class ConsumerGroupDescribeDescribedGroupShape(TypedDict, total=False):
        error_code: int
        error_message: str | None
        group_id: str
        group_state: str
        group_epoch: int
        assignment_epoch: int
        assignor_name: str
        members: Sequence[ConsumerGroupDescribeMemberShape]
        authorized_operations: int

    class ConsumerGroupDescribeMemberShape(TypedDict, total=False):
        member_id: str
        instance_id: str | None
        rack_id: str | None
        member_epoch: int
        client_id: str
        client_host: str
        subscribed_topic_names: Sequence[str]
        subscribed_topic_regex: str | None
        assignment: ConsumerGroupDescribeAssignmentShape
        target_assignment: ConsumerGroupDescribeAssignmentShape
        member_type: int

    class ConsumerGroupDescribeAssignmentShape(TypedDict, total=False):
        topic_partitions: Sequence[ConsumerGroupDescribeTopicPartitionsShape]

    class ConsumerGroupDescribeTopicPartitionsShape(TypedDict, total=False):
        topic_id: uuid.UUID | None
        topic_name: str
        partitions: Sequence[int]

    class ListConfigResourcesResponseShape(TypedDict, total=False):
        throttle_time: int
        error_code: int
        config_resources: Sequence[ListConfigResourcesConfigResourceShape]

    class ListConfigResourcesConfigResourceShape(TypedDict, total=False):
        resource_name: str
        resource_type: int

    class DescribeTopicPartitionsResponseShape(TypedDict, total=False):
        throttle_time: int
        topics: Sequence[DescribeTopicPartitionsResponseTopicShape]
        next_cursor: DescribeTopicPartitionsCursorShape | None

    class DescribeTopicPartitionsResponseTopicShape(TypedDict, total=False):
        error_code: int
        name: str | None
        topic_id: uuid.UUID | None
        is_internal: bool
        partitions: Sequence[DescribeTopicPartitionsResponsePartitionShape]
        topic_authorized_operations: int

    class DescribeTopicPartitionsResponsePartitionShape(TypedDict, total=False):
        error_code: int
        partition_index: int
        leader_id: int
        leader_epoch: int
        replica_nodes: Sequence[int]
        isr_nodes: Sequence[int]
        eligible_leader_replicas: Sequence[int] | None
        last_known_elr: Sequence[int] | None
        offline_replicas: Sequence[int]

    class DescribeTopicPartitionsCursorShape(TypedDict, total=False):
        topic_name: str
        partition_index: int

    class AddRaftVoterResponseShape(TypedDict, total=False):
        throttle_time: int
        error_code: int
        error_message: str | None

    class RemoveRaftVoterResponseShape(TypedDict, total=False):
        throttle_time: int
        error_code: int
        error_message: str | None

    ResponseShape: TypeAlias = (
        ProduceResponseShape
        | FetchResponseShape
        | ListOffsetsResponseShape
        | MetadataResponseShape
        | OffsetCommitResponseShape
        | OffsetFetchResponseShape
        | FindCoordinatorResponseShape
        | JoinGroupResponseShape
        | HeartbeatResponseShape
        | LeaveGroupResponseShape
        | SyncGroupResponseShape
        | DescribeGroupsResponseShape
        | ListGroupsResponseShape
        | SaslHandshakeResponseShape
        | ApiVersionsResponseShape
        | CreateTopicsResponseShape
        | DeleteTopicsResponseShape
        | DeleteRecordsResponseShape
        | InitProducerIdResponseShape
        | OffsetForLeaderEpochResponseShape
        | AddPartitionsToTxnResponseShape
        | AddOffsetsToTxnResponseShape
        | EndTxnResponseShape
        | WriteTxnMarkersResponseShape
        | TxnOffsetCommitResponseShape
        | DescribeAclsResponseShape
        | CreateAclsResponseShape
        | DeleteAclsResponseShape
        | DescribeConfigsResponseShape
        | AlterConfigsResponseShape
        | AlterReplicaLogDirsResponseShape
        | DescribeLogDirsResponseShape
        | SaslAuthenticateResponseShape
        | CreatePartitionsResponseShape
        | DeleteGroupsResponseShape
        | ElectLeadersResponseShape
        | IncrementalAlterConfigsResponseShape
        | AlterPartitionReassignmentsResponseShape
        | ListPartitionReassignmentsResponseShape
        | OffsetDeleteResponseShape
        | DescribeUserScramCredentialsResponseShape
        | AlterUserScramCredentialsResponseShape
        | DescribeQuorumResponseShape
        | UpdateFeaturesResponseShape
        | DescribeClusterResponseShape
        | DescribeProducersResponseShape
        | UnregisterBrokerResponseShape
        | DescribeTransactionsResponseShape
        | ListTransactionsResponseShape
        | ConsumerGroupHeartbeatResponseShape
        | ConsumerGroupDescribeResponseShape
        | ListConfigResourcesResponseShape
        | DescribeTopicPartitionsResponseShape
        | AddRaftVoterResponseShape
        | RemoveRaftVoterResponseShape
    )


# The fields of each response entity's description, by (api key, kio class name).
FIELDS: dict[tuple[int, str], frozenset[str]] = {
    (0, "ProduceResponse"): frozenset(
        (
            "responses",
            "throttle_time",
        )
    ),
    (0, "TopicProduceResponse"): frozenset(
        (
            "name",
            "partition_responses",
        )
    ),
    (0, "PartitionProduceResponse"): frozenset(
        (
            "index",
            "error_code",
            "base_offset",
            "log_append_time",
            "log_start_offset",
            "record_errors",
            "error_message",
        )
    ),
    (0, "BatchIndexAndErrorMessage"): frozenset(
        (
            "batch_index",
            "batch_index_error_message",
        )
    ),
    (1, "FetchResponse"): frozenset(
        (
            "throttle_time",
            "responses",
            "error_code",
            "session_id",
        )
    ),
    (1, "FetchableTopicResponse"): frozenset(
        (
            "topic",
            "partitions",
        )
    ),
    (1, "PartitionData"): frozenset(
        (
            "partition_index",
            "error_code",
            "high_watermark",
            "last_stable_offset",
            "aborted_transactions",
            "records",
            "log_start_offset",
            "preferred_read_replica",
        )
    ),
    (1, "AbortedTransaction"): frozenset(
        (
            "producer_id",
            "first_offset",
        )
    ),
    (2, "ListOffsetsResponse"): frozenset(
        (
            "topics",
            "throttle_time",
        )
    ),
    (2, "ListOffsetsTopicResponse"): frozenset(
        (
            "name",
            "partitions",
        )
    ),
    (2, "ListOffsetsPartitionResponse"): frozenset(
        (
            "partition_index",
            "error_code",
            "timestamp",
            "offset",
            "leader_epoch",
        )
    ),
    (3, "MetadataResponse"): frozenset(
        (
            "brokers",
            "controller_id",
            "topics",
            "cluster_id",
            "throttle_time",
            "cluster_authorized_operations",
        )
    ),
    (3, "MetadataResponseBroker"): frozenset(
        (
            "node_id",
            "host",
            "port",
            "rack",
        )
    ),
    (3, "MetadataResponseTopic"): frozenset(
        (
            "error_code",
            "name",
            "is_internal",
            "partitions",
            "topic_authorized_operations",
            "topic_id",
        )
    ),
    (3, "MetadataResponsePartition"): frozenset(
        (
            "error_code",
            "partition_index",
            "leader_id",
            "replica_nodes",
            "isr_nodes",
            "offline_replicas",
            "leader_epoch",
        )
    ),
    (8, "OffsetCommitResponse"): frozenset(
        (
            "topics",
            "throttle_time",
        )
    ),
    (8, "OffsetCommitResponseTopic"): frozenset(
        (
            "name",
            "partitions",
        )
    ),
    (8, "OffsetCommitResponsePartition"): frozenset(
        (
            "partition_index",
            "error_code",
        )
    ),
    (9, "OffsetFetchResponse"): frozenset(
        (
            "topics",
            "error_code",
            "throttle_time",
            "groups",
        )
    ),
    (9, "OffsetFetchResponseTopic"): frozenset(
        (
            "name",
            "partitions",
        )
    ),
    (9, "OffsetFetchResponsePartition"): frozenset(
        (
            "partition_index",
            "committed_offset",
            "metadata",
            "error_code",
            "committed_leader_epoch",
        )
    ),
    (9, "OffsetFetchResponseGroup"): frozenset(
        (
            "group_id",
            "topics",
            "error_code",
        )
    ),
    (9, "OffsetFetchResponseTopics"): frozenset(
        (
            "name",
            "partitions",
        )
    ),
    (9, "OffsetFetchResponsePartitions"): frozenset(
        (
            "partition_index",
            "committed_offset",
            "committed_leader_epoch",
            "metadata",
            "error_code",
        )
    ),
    (10, "FindCoordinatorResponse"): frozenset(
        (
            "error_code",
            "node_id",
            "host",
            "port",
            "throttle_time",
            "error_message",
            "coordinators",
        )
    ),
    (10, "Coordinator"): frozenset(
        (
            "key",
            "node_id",
            "host",
            "port",
            "error_code",
            "error_message",
        )
    ),
    (11, "JoinGroupResponse"): frozenset(
        (
            "error_code",
            "generation_id",
            "protocol_name",
            "leader",
            "member_id",
            "members",
            "throttle_time",
        )
    ),
    (11, "JoinGroupResponseMember"): frozenset(
        (
            "member_id",
            "metadata",
            "group_instance_id",
        )
    ),
    (12, "HeartbeatResponse"): frozenset(
        (
            "error_code",
            "throttle_time",
        )
    ),
    (13, "LeaveGroupResponse"): frozenset(
        (
            "error_code",
            "throttle_time",
        )
    ),
    (14, "SyncGroupResponse"): frozenset(
        (
            "error_code",
            "assignment",
            "throttle_time",
        )
    ),
    (15, "DescribeGroupsResponse"): frozenset(
        (
            "groups",
            "throttle_time",
        )
    ),
    (15, "DescribedGroup"): frozenset(
        (
            "error_code",
            "group_id",
            "group_state",
            "protocol_type",
            "protocol_data",
            "members",
            "authorized_operations",
        )
    ),
    (15, "DescribedGroupMember"): frozenset(
        (
            "member_id",
            "client_id",
            "client_host",
            "member_metadata",
            "member_assignment",
            "group_instance_id",
        )
    ),
    (16, "ListGroupsResponse"): frozenset(
        (
            "error_code",
            "groups",
            "throttle_time",
        )
    ),
    (16, "ListedGroup"): frozenset(
        (
            "group_id",
            "protocol_type",
        )
    ),
    (17, "SaslHandshakeResponse"): frozenset(
        (
            "error_code",
            "mechanisms",
        )
    ),
    (18, "ApiVersionsResponse"): frozenset(
        (
            "error_code",
            "api_keys",
            "throttle_time",
            "supported_features",
            "finalized_features_epoch",
            "finalized_features",
            "zk_migration_ready",
        )
    ),
    (18, "ApiVersion"): frozenset(
        (
            "api_key",
            "min_version",
            "max_version",
        )
    ),
    (18, "SupportedFeatureKey"): frozenset(
        (
            "name",
            "min_version",
            "max_version",
        )
    ),
    (18, "FinalizedFeatureKey"): frozenset(
        (
            "name",
            "max_version_level",
            "min_version_level",
        )
    ),
    (19, "CreateTopicsResponse"): frozenset(
        (
            "throttle_time",
            "topics",
        )
    ),
    (19, "CreatableTopicResult"): frozenset(
        (
            "name",
            "error_code",
            "error_message",
        )
    ),
    (20, "DeleteTopicsResponse"): frozenset(
        (
            "throttle_time",
            "responses",
        )
    ),
    (20, "DeletableTopicResult"): frozenset(
        (
            "name",
            "error_code",
        )
    ),
    (21, "DeleteRecordsResponse"): frozenset(
        (
            "throttle_time",
            "topics",
        )
    ),
    (21, "DeleteRecordsTopicResult"): frozenset(
        (
            "name",
            "partitions",
        )
    ),
    (21, "DeleteRecordsPartitionResult"): frozenset(
        (
            "partition_index",
            "low_watermark",
            "error_code",
        )
    ),
    (22, "InitProducerIdResponse"): frozenset(
        (
            "throttle_time",
            "error_code",
            "producer_id",
            "producer_epoch",
        )
    ),
    (23, "OffsetForLeaderEpochResponse"): frozenset(
        (
            "throttle_time",
            "topics",
        )
    ),
    (23, "OffsetForLeaderTopicResult"): frozenset(
        (
            "topic",
            "partitions",
        )
    ),
    (23, "EpochEndOffset"): frozenset(
        (
            "error_code",
            "partition",
            "leader_epoch",
            "end_offset",
        )
    ),
    (24, "AddPartitionsToTxnResponse"): frozenset(
        (
            "throttle_time",
            "results_by_topic_v3_and_below",
        )
    ),
    (24, "AddPartitionsToTxnTopicResult"): frozenset(
        (
            "name",
            "results_by_partition",
        )
    ),
    (24, "AddPartitionsToTxnPartitionResult"): frozenset(
        (
            "partition_index",
            "partition_error_code",
        )
    ),
    (25, "AddOffsetsToTxnResponse"): frozenset(
        (
            "throttle_time",
            "error_code",
        )
    ),
    (26, "EndTxnResponse"): frozenset(
        (
            "throttle_time",
            "error_code",
        )
    ),
    (27, "WriteTxnMarkersResponse"): frozenset(("markers",)),
    (27, "WritableTxnMarkerResult"): frozenset(
        (
            "producer_id",
            "topics",
        )
    ),
    (27, "WritableTxnMarkerTopicResult"): frozenset(
        (
            "name",
            "partitions",
        )
    ),
    (27, "WritableTxnMarkerPartitionResult"): frozenset(
        (
            "partition_index",
            "error_code",
        )
    ),
    (28, "TxnOffsetCommitResponse"): frozenset(
        (
            "throttle_time",
            "topics",
        )
    ),
    (28, "TxnOffsetCommitResponseTopic"): frozenset(
        (
            "name",
            "partitions",
        )
    ),
    (28, "TxnOffsetCommitResponsePartition"): frozenset(
        (
            "partition_index",
            "error_code",
        )
    ),
    (29, "DescribeAclsResponse"): frozenset(
        (
            "throttle_time",
            "error_code",
            "error_message",
            "resources",
        )
    ),
    (29, "DescribeAclsResource"): frozenset(
        (
            "resource_type",
            "resource_name",
            "pattern_type",
            "acls",
        )
    ),
    (29, "AclDescription"): frozenset(
        (
            "principal",
            "host",
            "operation",
            "permission_type",
        )
    ),
    (30, "CreateAclsResponse"): frozenset(
        (
            "throttle_time",
            "results",
        )
    ),
    (30, "AclCreationResult"): frozenset(
        (
            "error_code",
            "error_message",
        )
    ),
    (31, "DeleteAclsResponse"): frozenset(
        (
            "throttle_time",
            "filter_results",
        )
    ),
    (31, "DeleteAclsFilterResult"): frozenset(
        (
            "error_code",
            "error_message",
            "matching_acls",
        )
    ),
    (31, "DeleteAclsMatchingAcl"): frozenset(
        (
            "error_code",
            "error_message",
            "resource_type",
            "resource_name",
            "pattern_type",
            "principal",
            "host",
            "operation",
            "permission_type",
        )
    ),
    (32, "DescribeConfigsResponse"): frozenset(
        (
            "throttle_time",
            "results",
        )
    ),
    (32, "DescribeConfigsResult"): frozenset(
        (
            "error_code",
            "error_message",
            "resource_type",
            "resource_name",
            "configs",
        )
    ),
    (32, "DescribeConfigsResourceResult"): frozenset(
        (
            "name",
            "value",
            "read_only",
            "config_source",
            "is_sensitive",
            "synonyms",
            "config_type",
            "documentation",
        )
    ),
    (32, "DescribeConfigsSynonym"): frozenset(
        (
            "name",
            "value",
            "source",
        )
    ),
    (33, "AlterConfigsResponse"): frozenset(
        (
            "throttle_time",
            "responses",
        )
    ),
    (33, "AlterConfigsResourceResponse"): frozenset(
        (
            "error_code",
            "error_message",
            "resource_type",
            "resource_name",
        )
    ),
    (34, "AlterReplicaLogDirsResponse"): frozenset(
        (
            "throttle_time",
            "results",
        )
    ),
    (34, "AlterReplicaLogDirTopicResult"): frozenset(
        (
            "topic_name",
            "partitions",
        )
    ),
    (34, "AlterReplicaLogDirPartitionResult"): frozenset(
        (
            "partition_index",
            "error_code",
        )
    ),
    (35, "DescribeLogDirsResponse"): frozenset(
        (
            "throttle_time",
            "results",
            "error_code",
        )
    ),
    (35, "DescribeLogDirsResult"): frozenset(
        (
            "error_code",
            "log_dir",
            "topics",
            "total_bytes",
            "usable_bytes",
        )
    ),
    (35, "DescribeLogDirsTopic"): frozenset(
        (
            "name",
            "partitions",
        )
    ),
    (35, "DescribeLogDirsPartition"): frozenset(
        (
            "partition_index",
            "partition_size",
            "offset_lag",
            "is_future_key",
        )
    ),
    (36, "SaslAuthenticateResponse"): frozenset(
        (
            "error_code",
            "error_message",
            "auth_bytes",
            "session_lifetime",
        )
    ),
    (37, "CreatePartitionsResponse"): frozenset(
        (
            "throttle_time",
            "results",
        )
    ),
    (37, "CreatePartitionsTopicResult"): frozenset(
        (
            "name",
            "error_code",
            "error_message",
        )
    ),
    (42, "DeleteGroupsResponse"): frozenset(
        (
            "throttle_time",
            "results",
        )
    ),
    (42, "DeletableGroupResult"): frozenset(
        (
            "group_id",
            "error_code",
        )
    ),
    (43, "ElectLeadersResponse"): frozenset(
        (
            "throttle_time",
            "replica_election_results",
            "error_code",
        )
    ),
    (43, "ReplicaElectionResult"): frozenset(
        (
            "topic",
            "partition_result",
        )
    ),
    (43, "PartitionResult"): frozenset(
        (
            "partition_id",
            "error_code",
            "error_message",
        )
    ),
    (44, "IncrementalAlterConfigsResponse"): frozenset(
        (
            "throttle_time",
            "responses",
        )
    ),
    (44, "AlterConfigsResourceResponse"): frozenset(
        (
            "error_code",
            "error_message",
            "resource_type",
            "resource_name",
        )
    ),
    (45, "AlterPartitionReassignmentsResponse"): frozenset(
        (
            "throttle_time",
            "error_code",
            "error_message",
            "responses",
        )
    ),
    (45, "ReassignableTopicResponse"): frozenset(
        (
            "name",
            "partitions",
        )
    ),
    (45, "ReassignablePartitionResponse"): frozenset(
        (
            "partition_index",
            "error_code",
            "error_message",
        )
    ),
    (46, "ListPartitionReassignmentsResponse"): frozenset(
        (
            "throttle_time",
            "error_code",
            "error_message",
            "topics",
        )
    ),
    (46, "OngoingTopicReassignment"): frozenset(
        (
            "name",
            "partitions",
        )
    ),
    (46, "OngoingPartitionReassignment"): frozenset(
        (
            "partition_index",
            "replicas",
            "adding_replicas",
            "removing_replicas",
        )
    ),
    (47, "OffsetDeleteResponse"): frozenset(
        (
            "error_code",
            "throttle_time",
            "topics",
        )
    ),
    (47, "OffsetDeleteResponseTopic"): frozenset(
        (
            "name",
            "partitions",
        )
    ),
    (47, "OffsetDeleteResponsePartition"): frozenset(
        (
            "partition_index",
            "error_code",
        )
    ),
    (50, "DescribeUserScramCredentialsResponse"): frozenset(
        (
            "throttle_time",
            "error_code",
            "error_message",
            "results",
        )
    ),
    (50, "DescribeUserScramCredentialsResult"): frozenset(
        (
            "user",
            "error_code",
            "error_message",
            "credential_infos",
        )
    ),
    (50, "CredentialInfo"): frozenset(
        (
            "mechanism",
            "iterations",
        )
    ),
    (51, "AlterUserScramCredentialsResponse"): frozenset(
        (
            "throttle_time",
            "results",
        )
    ),
    (51, "AlterUserScramCredentialsResult"): frozenset(
        (
            "user",
            "error_code",
            "error_message",
        )
    ),
    (55, "DescribeQuorumResponse"): frozenset(
        (
            "error_code",
            "topics",
            "error_message",
            "nodes",
        )
    ),
    (55, "TopicData"): frozenset(
        (
            "topic_name",
            "partitions",
        )
    ),
    (55, "PartitionData"): frozenset(
        (
            "partition_index",
            "error_code",
            "leader_id",
            "leader_epoch",
            "high_watermark",
            "current_voters",
            "observers",
            "error_message",
        )
    ),
    (55, "ReplicaState"): frozenset(
        (
            "replica_id",
            "log_end_offset",
            "last_fetch_timestamp",
            "last_caught_up_timestamp",
            "replica_directory_id",
        )
    ),
    (55, "Node"): frozenset(
        (
            "node_id",
            "listeners",
        )
    ),
    (55, "Listener"): frozenset(
        (
            "name",
            "host",
            "port",
        )
    ),
    (57, "UpdateFeaturesResponse"): frozenset(
        (
            "throttle_time",
            "error_code",
            "error_message",
            "results",
        )
    ),
    (57, "UpdatableFeatureResult"): frozenset(
        (
            "feature",
            "error_code",
            "error_message",
        )
    ),
    (60, "DescribeClusterResponse"): frozenset(
        (
            "throttle_time",
            "error_code",
            "error_message",
            "cluster_id",
            "controller_id",
            "brokers",
            "cluster_authorized_operations",
            "endpoint_type",
        )
    ),
    (60, "DescribeClusterBroker"): frozenset(
        (
            "broker_id",
            "host",
            "port",
            "rack",
        )
    ),
    (61, "DescribeProducersResponse"): frozenset(
        (
            "throttle_time",
            "topics",
        )
    ),
    (61, "TopicResponse"): frozenset(
        (
            "name",
            "partitions",
        )
    ),
    (61, "PartitionResponse"): frozenset(
        (
            "partition_index",
            "error_code",
            "error_message",
            "active_producers",
        )
    ),
    (61, "ProducerState"): frozenset(
        (
            "producer_id",
            "producer_epoch",
            "last_sequence",
            "last_timestamp",
            "coordinator_epoch",
            "current_txn_start_offset",
        )
    ),
    (64, "UnregisterBrokerResponse"): frozenset(
        (
            "throttle_time",
            "error_code",
            "error_message",
        )
    ),
    (65, "DescribeTransactionsResponse"): frozenset(
        (
            "throttle_time",
            "transaction_states",
        )
    ),
    (65, "TransactionState"): frozenset(
        (
            "error_code",
            "transactional_id",
            "transaction_state",
            "transaction_timeout",
            "transaction_start_time",
            "producer_id",
            "producer_epoch",
            "topics",
        )
    ),
    (65, "TopicData"): frozenset(
        (
            "topic",
            "partitions",
        )
    ),
    (66, "ListTransactionsResponse"): frozenset(
        (
            "throttle_time",
            "error_code",
            "unknown_state_filters",
            "transaction_states",
        )
    ),
    (66, "TransactionState"): frozenset(
        (
            "transactional_id",
            "producer_id",
            "transaction_state",
        )
    ),
    (68, "ConsumerGroupHeartbeatResponse"): frozenset(
        (
            "throttle_time",
            "error_code",
            "error_message",
            "member_id",
            "member_epoch",
            "heartbeat_interval",
            "assignment",
        )
    ),
    (68, "Assignment"): frozenset(("topic_partitions",)),
    (68, "TopicPartitions"): frozenset(
        (
            "topic_id",
            "partitions",
        )
    ),
    (69, "ConsumerGroupDescribeResponse"): frozenset(
        (
            "throttle_time",
            "groups",
        )
    ),
    (69, "DescribedGroup"): frozenset(
        (
            "error_code",
            "error_message",
            "group_id",
            "group_state",
            "group_epoch",
            "assignment_epoch",
            "assignor_name",
            "members",
            "authorized_operations",
        )
    ),
    (69, "Member"): frozenset(
        (
            "member_id",
            "instance_id",
            "rack_id",
            "member_epoch",
            "client_id",
            "client_host",
            "subscribed_topic_names",
            "subscribed_topic_regex",
            "assignment",
            "target_assignment",
            "member_type",
        )
    ),
    (69, "Assignment"): frozenset(("topic_partitions",)),
    (69, "TopicPartitions"): frozenset(
        (
            "topic_id",
            "topic_name",
            "partitions",
        )
    ),
    (74, "ListConfigResourcesResponse"): frozenset(
        (
            "throttle_time",
            "error_code",
            "config_resources",
        )
    ),
    (74, "ConfigResource"): frozenset(
        (
            "resource_name",
            "resource_type",
        )
    ),
    (75, "DescribeTopicPartitionsResponse"): frozenset(
        (
            "throttle_time",
            "topics",
            "next_cursor",
        )
    ),
    (75, "DescribeTopicPartitionsResponseTopic"): frozenset(
        (
            "error_code",
            "name",
            "topic_id",
            "is_internal",
            "partitions",
            "topic_authorized_operations",
        )
    ),
    (75, "DescribeTopicPartitionsResponsePartition"): frozenset(
        (
            "error_code",
            "partition_index",
            "leader_id",
            "leader_epoch",
            "replica_nodes",
            "isr_nodes",
            "eligible_leader_replicas",
            "last_known_elr",
            "offline_replicas",
        )
    ),
    (75, "Cursor"): frozenset(
        (
            "topic_name",
            "partition_index",
        )
    ),
    (80, "AddRaftVoterResponse"): frozenset(
        (
            "throttle_time",
            "error_code",
            "error_message",
        )
    ),
    (81, "RemoveRaftVoterResponse"): frozenset(
        (
            "throttle_time",
            "error_code",
            "error_message",
        )
    ),
}


def is_produce(request: RequestPayload) -> TypeGuard[ProduceRequests]:
    return request.__api_key__ == 0


def is_fetch(request: RequestPayload) -> TypeGuard[FetchRequests]:
    return request.__api_key__ == 1


def is_list_offsets(request: RequestPayload) -> TypeGuard[ListOffsetsRequests]:
    return request.__api_key__ == 2


def is_metadata(request: RequestPayload) -> TypeGuard[MetadataRequests]:
    return request.__api_key__ == 3


def is_offset_commit(request: RequestPayload) -> TypeGuard[OffsetCommitRequests]:
    return request.__api_key__ == 8


def is_offset_fetch(request: RequestPayload) -> TypeGuard[OffsetFetchRequests]:
    return request.__api_key__ == 9


def is_find_coordinator(request: RequestPayload) -> TypeGuard[FindCoordinatorRequests]:
    return request.__api_key__ == 10


def is_join_group(request: RequestPayload) -> TypeGuard[JoinGroupRequests]:
    return request.__api_key__ == 11


def is_heartbeat(request: RequestPayload) -> TypeGuard[HeartbeatRequests]:
    return request.__api_key__ == 12


def is_leave_group(request: RequestPayload) -> TypeGuard[LeaveGroupRequests]:
    return request.__api_key__ == 13


def is_sync_group(request: RequestPayload) -> TypeGuard[SyncGroupRequests]:
    return request.__api_key__ == 14


def is_describe_groups(request: RequestPayload) -> TypeGuard[DescribeGroupsRequests]:
    return request.__api_key__ == 15


def is_list_groups(request: RequestPayload) -> TypeGuard[ListGroupsRequests]:
    return request.__api_key__ == 16


def is_sasl_handshake(request: RequestPayload) -> TypeGuard[SaslHandshakeRequests]:
    return request.__api_key__ == 17


def is_api_versions(request: RequestPayload) -> TypeGuard[ApiVersionsRequests]:
    return request.__api_key__ == 18


def is_create_topics(request: RequestPayload) -> TypeGuard[CreateTopicsRequests]:
    return request.__api_key__ == 19


def is_delete_topics(request: RequestPayload) -> TypeGuard[DeleteTopicsRequests]:
    return request.__api_key__ == 20


def is_delete_records(request: RequestPayload) -> TypeGuard[DeleteRecordsRequests]:
    return request.__api_key__ == 21


def is_init_producer_id(request: RequestPayload) -> TypeGuard[InitProducerIdRequests]:
    return request.__api_key__ == 22


def is_offset_for_leader_epoch(request: RequestPayload) -> TypeGuard[OffsetForLeaderEpochRequests]:
    return request.__api_key__ == 23


def is_add_partitions_to_txn(request: RequestPayload) -> TypeGuard[AddPartitionsToTxnRequests]:
    return request.__api_key__ == 24


def is_add_offsets_to_txn(request: RequestPayload) -> TypeGuard[AddOffsetsToTxnRequests]:
    return request.__api_key__ == 25


def is_end_txn(request: RequestPayload) -> TypeGuard[EndTxnRequests]:
    return request.__api_key__ == 26


def is_write_txn_markers(request: RequestPayload) -> TypeGuard[WriteTxnMarkersRequests]:
    return request.__api_key__ == 27


def is_txn_offset_commit(request: RequestPayload) -> TypeGuard[TxnOffsetCommitRequests]:
    return request.__api_key__ == 28


def is_describe_acls(request: RequestPayload) -> TypeGuard[DescribeAclsRequests]:
    return request.__api_key__ == 29


def is_create_acls(request: RequestPayload) -> TypeGuard[CreateAclsRequests]:
    return request.__api_key__ == 30


def is_delete_acls(request: RequestPayload) -> TypeGuard[DeleteAclsRequests]:
    return request.__api_key__ == 31


def is_describe_configs(request: RequestPayload) -> TypeGuard[DescribeConfigsRequests]:
    return request.__api_key__ == 32


def is_alter_configs(request: RequestPayload) -> TypeGuard[AlterConfigsRequests]:
    return request.__api_key__ == 33


def is_alter_replica_log_dirs(request: RequestPayload) -> TypeGuard[AlterReplicaLogDirsRequests]:
    return request.__api_key__ == 34


def is_describe_log_dirs(request: RequestPayload) -> TypeGuard[DescribeLogDirsRequests]:
    return request.__api_key__ == 35


def is_sasl_authenticate(request: RequestPayload) -> TypeGuard[SaslAuthenticateRequests]:
    return request.__api_key__ == 36


def is_create_partitions(request: RequestPayload) -> TypeGuard[CreatePartitionsRequests]:
    return request.__api_key__ == 37


def is_delete_groups(request: RequestPayload) -> TypeGuard[DeleteGroupsRequests]:
    return request.__api_key__ == 42


def is_elect_leaders(request: RequestPayload) -> TypeGuard[ElectLeadersRequests]:
    return request.__api_key__ == 43


def is_incremental_alter_configs(
    request: RequestPayload,
) -> TypeGuard[IncrementalAlterConfigsRequests]:
    return request.__api_key__ == 44


def is_alter_partition_reassignments(
    request: RequestPayload,
) -> TypeGuard[AlterPartitionReassignmentsRequests]:
    return request.__api_key__ == 45


def is_list_partition_reassignments(
    request: RequestPayload,
) -> TypeGuard[ListPartitionReassignmentsRequests]:
    return request.__api_key__ == 46


def is_offset_delete(request: RequestPayload) -> TypeGuard[OffsetDeleteRequests]:
    return request.__api_key__ == 47


def is_describe_user_scram_credentials(
    request: RequestPayload,
) -> TypeGuard[DescribeUserScramCredentialsRequests]:
    return request.__api_key__ == 50


def is_alter_user_scram_credentials(
    request: RequestPayload,
) -> TypeGuard[AlterUserScramCredentialsRequests]:
    return request.__api_key__ == 51


def is_describe_quorum(request: RequestPayload) -> TypeGuard[DescribeQuorumRequests]:
    return request.__api_key__ == 55


def is_update_features(request: RequestPayload) -> TypeGuard[UpdateFeaturesRequests]:
    return request.__api_key__ == 57


def is_describe_cluster(request: RequestPayload) -> TypeGuard[DescribeClusterRequests]:
    return request.__api_key__ == 60


def is_describe_producers(request: RequestPayload) -> TypeGuard[DescribeProducersRequests]:
    return request.__api_key__ == 61


def is_unregister_broker(request: RequestPayload) -> TypeGuard[UnregisterBrokerRequests]:
    return request.__api_key__ == 64


def is_describe_transactions(request: RequestPayload) -> TypeGuard[DescribeTransactionsRequests]:
    return request.__api_key__ == 65


def is_list_transactions(request: RequestPayload) -> TypeGuard[ListTransactionsRequests]:
    return request.__api_key__ == 66


def is_consumer_group_heartbeat(
    request: RequestPayload,
) -> TypeGuard[ConsumerGroupHeartbeatRequests]:
    return request.__api_key__ == 68


def is_consumer_group_describe(request: RequestPayload) -> TypeGuard[ConsumerGroupDescribeRequests]:
    return request.__api_key__ == 69


def is_list_config_resources(request: RequestPayload) -> TypeGuard[ListConfigResourcesRequests]:
    return request.__api_key__ == 74


def is_describe_topic_partitions(
    request: RequestPayload,
) -> TypeGuard[DescribeTopicPartitionsRequests]:
    return request.__api_key__ == 75


def is_add_raft_voter(request: RequestPayload) -> TypeGuard[AddRaftVoterRequests]:
    return request.__api_key__ == 80


def is_remove_raft_voter(request: RequestPayload) -> TypeGuard[RemoveRaftVoterRequests]:
    return request.__api_key__ == 81
