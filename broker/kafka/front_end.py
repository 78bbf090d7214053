"""From a decoded Kafka request to what the connection must do with it (sans-I/O).

ApiVersions is answered here (the table is this listener's own); every other api goes to its
translator, which names the internal request the dispatcher runs through the same handlers
as the native listener.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeGuard, TypeVar

from kio.static.protocol import RequestPayload

from rillet.broker.kafka import (
    acls,
    admin,
    classic_groups,
    config_changes,
    config_resources,
    configs,
    consumer_groups,
    data_path,
    describe_cluster,
    describe_quorum,
    features,
    group_deletion,
    leader_epochs,
    log_dirs,
    offsets,
    partition_counts,
    producer_admin,
    raft_voters,
    reassignments,
    record_deletion,
    sasl_apis,
    shapes,
    topic_partitions,
    transactions,
    user_credentials,
)
from rillet.broker.kafka.api_table import (
    ALTER_CONFIGS,
    CONSUMER_GROUP_DESCRIBE,
    DESCRIBE_CLUSTER,
    DESCRIBE_CONFIGS,
    DESCRIBE_TOPIC_PARTITIONS,
    LIST_CONFIG_RESOURCES,
    SASL_AUTHENTICATE,
    SASL_HANDSHAKE,
    UPDATE_FEATURES,
    ApiSchema,
)
from rillet.broker.kafka.codec import api_versions_response
from rillet.broker.kafka.translation import Answer, Caller, ClusterView, Forwarded
from rillet.wire.api import ApiKey

Q = TypeVar("Q")


class Translator(Protocol):
    def __call__(
        self, schema: ApiSchema, request: RequestPayload, view: ClusterView, caller: Caller
    ) -> Forwarded | Answer: ...


@dataclass(frozen=True, slots=True)
class Route(Generic[Q]):
    """An api's translator, with the guard that narrows a decoded request to the union of
    the api's served versions (broker/kafka/shapes.py), which the translator takes."""

    accepts: Callable[[RequestPayload], TypeGuard[Q]]
    translator: Callable[[ApiSchema, Q, ClusterView, Caller], Forwarded | Answer]

    def __call__(
        self, schema: ApiSchema, request: RequestPayload, view: ClusterView, caller: Caller
    ) -> Forwarded | Answer:
        if not self.accepts(request):
            raise TypeError(f"{type(request).__name__} is not a request of api {schema.api_key}")
        return self.translator(schema, request, view, caller)


def _api_versions(
    schema: ApiSchema, req: shapes.ApiVersionsRequests, view: ClusterView, caller: Caller
) -> Answer:
    return Answer(api_versions_response(schema, rillet_level=view.feature_level()))


TRANSLATORS: dict[int, Translator] = {
    ApiKey.API_VERSIONS: Route(shapes.is_api_versions, _api_versions),
    ApiKey.PRODUCE: Route(shapes.is_produce, lambda s, r, v, c: data_path.translate_produce(s, r)),
    ApiKey.FETCH: Route(shapes.is_fetch, lambda s, r, v, c: data_path.translate_fetch(s, r, v)),
    ApiKey.LIST_OFFSETS: Route(
        shapes.is_list_offsets, lambda s, r, v, c: data_path.translate_list_offsets(s, r)
    ),
    ApiKey.METADATA: Route(
        shapes.is_metadata, lambda s, r, v, c: admin.translate_metadata(s, r, v)
    ),
    ApiKey.FIND_COORDINATOR: Route(
        shapes.is_find_coordinator, lambda s, r, v, c: admin.translate_find_coordinator(s, r, v)
    ),
    ApiKey.CREATE_TOPICS: Route(
        shapes.is_create_topics, lambda s, r, v, c: admin.translate_create_topics(s, r)
    ),
    ApiKey.DELETE_TOPICS: Route(
        shapes.is_delete_topics, lambda s, r, v, c: admin.translate_delete_topics(s, r)
    ),
    ApiKey.CREATE_PARTITIONS: Route(
        shapes.is_create_partitions,
        lambda s, r, v, c: partition_counts.translate_create_partitions(s, r),
    ),
    ApiKey.INIT_PRODUCER_ID: Route(
        shapes.is_init_producer_id, lambda s, r, v, c: admin.translate_init_producer_id(s, r)
    ),
    ApiKey.DELETE_RECORDS: Route(
        shapes.is_delete_records, lambda s, r, v, c: record_deletion.translate_delete_records(s, r)
    ),
    ApiKey.OFFSET_COMMIT: Route(
        shapes.is_offset_commit, lambda s, r, v, c: offsets.translate_offset_commit(s, r)
    ),
    ApiKey.OFFSET_FETCH: Route(
        shapes.is_offset_fetch, lambda s, r, v, c: offsets.translate_offset_fetch(s, r)
    ),
    ApiKey.JOIN_GROUP: Route(
        shapes.is_join_group, lambda s, r, v, c: classic_groups.translate_join_group(s, r, c)
    ),
    ApiKey.SYNC_GROUP: Route(
        shapes.is_sync_group, lambda s, r, v, c: classic_groups.translate_sync_group(s, r)
    ),
    ApiKey.HEARTBEAT: Route(
        shapes.is_heartbeat, lambda s, r, v, c: classic_groups.translate_heartbeat(s, r)
    ),
    ApiKey.LEAVE_GROUP: Route(
        shapes.is_leave_group, lambda s, r, v, c: classic_groups.translate_leave_group(s, r)
    ),
    ApiKey.DESCRIBE_GROUPS: Route(
        shapes.is_describe_groups, lambda s, r, v, c: classic_groups.translate_describe_groups(s, r)
    ),
    ApiKey.LIST_GROUPS: Route(
        shapes.is_list_groups, lambda s, r, v, c: classic_groups.translate_list_groups(s, r)
    ),
    ApiKey.OFFSET_FOR_LEADER_EPOCH: Route(
        shapes.is_offset_for_leader_epoch,
        lambda s, r, v, c: leader_epochs.translate_offset_for_leader_epoch(s, r),
    ),
    DESCRIBE_CONFIGS: Route(
        shapes.is_describe_configs, lambda s, r, v, c: configs.translate_describe_configs(s, r, v)
    ),
    ApiKey.DESCRIBE_LOG_DIRS: Route(
        shapes.is_describe_log_dirs, lambda s, r, v, c: log_dirs.translate_describe_log_dirs(s, r)
    ),
    ApiKey.ALTER_REPLICA_LOG_DIRS: Route(
        shapes.is_alter_replica_log_dirs,
        lambda s, r, v, c: log_dirs.translate_alter_replica_log_dirs(s, r),
    ),
    ApiKey.DESCRIBE_QUORUM: Route(
        shapes.is_describe_quorum,
        lambda s, r, v, c: describe_quorum.translate_describe_quorum(s, r, v),
    ),
    ApiKey.ADD_RAFT_VOTER: Route(
        shapes.is_add_raft_voter, lambda s, r, v, c: raft_voters.translate_add_raft_voter(s, r)
    ),
    ApiKey.REMOVE_RAFT_VOTER: Route(
        shapes.is_remove_raft_voter,
        lambda s, r, v, c: raft_voters.translate_remove_raft_voter(s, r),
    ),
    DESCRIBE_CLUSTER: Route(
        shapes.is_describe_cluster,
        lambda s, r, v, c: describe_cluster.translate_describe_cluster(s, r, v),
    ),
    ALTER_CONFIGS: Route(
        shapes.is_alter_configs, lambda s, r, v, c: config_changes.translate_config_changes(s, r)
    ),
    ApiKey.INCREMENTAL_ALTER_CONFIGS: Route(
        shapes.is_incremental_alter_configs,
        lambda s, r, v, c: config_changes.translate_config_changes(s, r),
    ),
    ApiKey.DELETE_GROUPS: Route(
        shapes.is_delete_groups, lambda s, r, v, c: group_deletion.translate_delete_groups(s, r)
    ),
    ApiKey.OFFSET_DELETE: Route(
        shapes.is_offset_delete, lambda s, r, v, c: group_deletion.translate_offset_delete(s, r)
    ),
    ApiKey.CREATE_ACLS: Route(
        shapes.is_create_acls, lambda s, r, v, c: acls.translate_create_acls(s, r)
    ),
    ApiKey.DESCRIBE_ACLS: Route(
        shapes.is_describe_acls, lambda s, r, v, c: acls.translate_describe_acls(s, r)
    ),
    ApiKey.DELETE_ACLS: Route(
        shapes.is_delete_acls, lambda s, r, v, c: acls.translate_delete_acls(s, r)
    ),
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: Route(
        shapes.is_describe_user_scram_credentials,
        lambda s, r, v, c: user_credentials.translate_describe(s, r),
    ),
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: Route(
        shapes.is_alter_user_scram_credentials,
        lambda s, r, v, c: user_credentials.translate_alter(s, r),
    ),
    ApiKey.CONSUMER_GROUP_HEARTBEAT: Route(
        shapes.is_consumer_group_heartbeat,
        lambda s, r, v, c: consumer_groups.translate_heartbeat(s, r, c),
    ),
    CONSUMER_GROUP_DESCRIBE: Route(
        shapes.is_consumer_group_describe,
        lambda s, r, v, c: consumer_groups.translate_describe(s, r),
    ),
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: Route(
        shapes.is_alter_partition_reassignments,
        lambda s, r, v, c: reassignments.translate_alter_reassignments(s, r),
    ),
    ApiKey.LIST_PARTITION_REASSIGNMENTS: Route(
        shapes.is_list_partition_reassignments,
        lambda s, r, v, c: reassignments.translate_list_reassignments(s, r),
    ),
    ApiKey.ELECT_LEADERS: Route(
        shapes.is_elect_leaders, lambda s, r, v, c: reassignments.translate_elect_leaders(s, r)
    ),
    ApiKey.UNREGISTER_BROKER: Route(
        shapes.is_unregister_broker,
        lambda s, r, v, c: reassignments.translate_unregister_broker(s, r),
    ),
    LIST_CONFIG_RESOURCES: Route(
        shapes.is_list_config_resources,
        lambda s, r, v, c: config_resources.translate_list_config_resources(s, r, v),
    ),
    UPDATE_FEATURES: Route(
        shapes.is_update_features,
        lambda s, r, v, c: features.translate_update_features(s, r, v.node_config().node_id),
    ),
    DESCRIBE_TOPIC_PARTITIONS: Route(
        shapes.is_describe_topic_partitions,
        lambda s, r, v, c: topic_partitions.translate_describe_topic_partitions(s, r, v),
    ),
    ApiKey.ADD_PARTITIONS_TO_TXN: Route(
        shapes.is_add_partitions_to_txn,
        lambda s, r, v, c: transactions.translate_add_partitions_to_txn(s, r),
    ),
    ApiKey.END_TXN: Route(
        shapes.is_end_txn, lambda s, r, v, c: transactions.translate_end_txn(s, r)
    ),
    ApiKey.LIST_TRANSACTIONS: Route(
        shapes.is_list_transactions,
        lambda s, r, v, c: transactions.translate_list_transactions(s, r),
    ),
    ApiKey.DESCRIBE_TRANSACTIONS: Route(
        shapes.is_describe_transactions,
        lambda s, r, v, c: transactions.translate_describe_transactions(s, r),
    ),
    ApiKey.ADD_OFFSETS_TO_TXN: Route(
        shapes.is_add_offsets_to_txn,
        lambda s, r, v, c: transactions.translate_add_offsets_to_txn(s, r),
    ),
    ApiKey.TXN_OFFSET_COMMIT: Route(
        shapes.is_txn_offset_commit,
        lambda s, r, v, c: transactions.translate_txn_offset_commit(s, r),
    ),
    ApiKey.DESCRIBE_PRODUCERS: Route(
        shapes.is_describe_producers,
        lambda s, r, v, c: producer_admin.translate_describe_producers(s, r),
    ),
    ApiKey.WRITE_TXN_MARKERS: Route(
        shapes.is_write_txn_markers,
        lambda s, r, v, c: producer_admin.translate_write_txn_markers(s, r),
    ),
}


TRANSLATORS[SASL_HANDSHAKE] = Route(
    shapes.is_sasl_handshake, lambda s, r, v, c: sasl_apis.translate_sasl_handshake(s, r)
)
TRANSLATORS[SASL_AUTHENTICATE] = Route(
    shapes.is_sasl_authenticate, lambda s, r, v, c: sasl_apis.translate_sasl_authenticate(s, r)
)

UNKNOWN_CALLER = Caller(None, "")


def translate(
    schema: ApiSchema, request: RequestPayload, view: ClusterView, caller: Caller = UNKNOWN_CALLER
) -> Forwarded | Answer:
    return TRANSLATORS[schema.api_key](schema, request, view, caller)
