"""From a decoded Kafka request to what the connection must do with it (sans-I/O).

ApiVersions is answered here (the table is this listener's own); every other api goes to its
translator, which names the internal request the dispatcher runs through the same handlers
as the native listener.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
from rillet.broker.kafka.translation import Answer, Caller, ClusterView, Forward
from rillet.wire.api import ApiKey

Translator = Callable[[ApiSchema, Any, ClusterView, Caller], Forward | Answer]


def _api_versions(schema: ApiSchema, req: Any, view: ClusterView, caller: Caller) -> Answer:
    return Answer(api_versions_response(schema, rillet_level=view.feature_level()))


TRANSLATORS: dict[int, Translator] = {
    ApiKey.API_VERSIONS: _api_versions,
    ApiKey.PRODUCE: lambda s, r, v, c: data_path.translate_produce(s, r),
    ApiKey.FETCH: lambda s, r, v, c: data_path.translate_fetch(s, r, v),
    ApiKey.LIST_OFFSETS: lambda s, r, v, c: data_path.translate_list_offsets(s, r),
    ApiKey.METADATA: lambda s, r, v, c: admin.translate_metadata(s, r, v),
    ApiKey.FIND_COORDINATOR: lambda s, r, v, c: admin.translate_find_coordinator(s, r, v),
    ApiKey.CREATE_TOPICS: lambda s, r, v, c: admin.translate_create_topics(s, r),
    ApiKey.DELETE_TOPICS: lambda s, r, v, c: admin.translate_delete_topics(s, r),
    ApiKey.CREATE_PARTITIONS: lambda s, r, v, c: partition_counts.translate_create_partitions(s, r),
    ApiKey.INIT_PRODUCER_ID: lambda s, r, v, c: admin.translate_init_producer_id(s, r),
    ApiKey.DELETE_RECORDS: lambda s, r, v, c: record_deletion.translate_delete_records(s, r),
    ApiKey.OFFSET_COMMIT: lambda s, r, v, c: offsets.translate_offset_commit(s, r),
    ApiKey.OFFSET_FETCH: lambda s, r, v, c: offsets.translate_offset_fetch(s, r),
    ApiKey.JOIN_GROUP: lambda s, r, v, c: classic_groups.translate_join_group(s, r, c),
    ApiKey.SYNC_GROUP: lambda s, r, v, c: classic_groups.translate_sync_group(s, r),
    ApiKey.HEARTBEAT: lambda s, r, v, c: classic_groups.translate_heartbeat(s, r),
    ApiKey.LEAVE_GROUP: lambda s, r, v, c: classic_groups.translate_leave_group(s, r),
    ApiKey.DESCRIBE_GROUPS: lambda s, r, v, c: classic_groups.translate_describe_groups(s, r),
    ApiKey.LIST_GROUPS: lambda s, r, v, c: classic_groups.translate_list_groups(s, r),
    ApiKey.OFFSET_FOR_LEADER_EPOCH: lambda s, r, v, c: (
        leader_epochs.translate_offset_for_leader_epoch(s, r)
    ),
    DESCRIBE_CONFIGS: lambda s, r, v, c: configs.translate_describe_configs(s, r, v),
    ApiKey.DESCRIBE_LOG_DIRS: lambda s, r, v, c: log_dirs.translate_describe_log_dirs(s, r),
    ApiKey.ALTER_REPLICA_LOG_DIRS: lambda s, r, v, c: log_dirs.translate_alter_replica_log_dirs(
        s, r
    ),
    ApiKey.DESCRIBE_QUORUM: lambda s, r, v, c: describe_quorum.translate_describe_quorum(s, r, v),
    ApiKey.ADD_RAFT_VOTER: lambda s, r, v, c: raft_voters.translate_add_raft_voter(s, r),
    ApiKey.REMOVE_RAFT_VOTER: lambda s, r, v, c: raft_voters.translate_remove_raft_voter(s, r),
    DESCRIBE_CLUSTER: lambda s, r, v, c: describe_cluster.translate_describe_cluster(s, r, v),
    ALTER_CONFIGS: lambda s, r, v, c: config_changes.translate_config_changes(s, r),
    ApiKey.INCREMENTAL_ALTER_CONFIGS: lambda s, r, v, c: config_changes.translate_config_changes(
        s, r
    ),
    ApiKey.DELETE_GROUPS: lambda s, r, v, c: group_deletion.translate_delete_groups(s, r),
    ApiKey.OFFSET_DELETE: lambda s, r, v, c: group_deletion.translate_offset_delete(s, r),
    ApiKey.CREATE_ACLS: lambda s, r, v, c: acls.translate_create_acls(s, r),
    ApiKey.DESCRIBE_ACLS: lambda s, r, v, c: acls.translate_describe_acls(s, r),
    ApiKey.DELETE_ACLS: lambda s, r, v, c: acls.translate_delete_acls(s, r),
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: lambda s, r, v, c: user_credentials.translate_describe(
        s, r
    ),
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: lambda s, r, v, c: user_credentials.translate_alter(s, r),
    ApiKey.CONSUMER_GROUP_HEARTBEAT: lambda s, r, v, c: consumer_groups.translate_heartbeat(
        s, r, c
    ),
    CONSUMER_GROUP_DESCRIBE: lambda s, r, v, c: consumer_groups.translate_describe(s, r),
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: lambda s, r, v, c: (
        reassignments.translate_alter_reassignments(s, r)
    ),
    ApiKey.LIST_PARTITION_REASSIGNMENTS: lambda s, r, v, c: (
        reassignments.translate_list_reassignments(s, r)
    ),
    ApiKey.ELECT_LEADERS: lambda s, r, v, c: reassignments.translate_elect_leaders(s, r),
    ApiKey.UNREGISTER_BROKER: lambda s, r, v, c: reassignments.translate_unregister_broker(s, r),
    LIST_CONFIG_RESOURCES: lambda s, r, v, c: config_resources.translate_list_config_resources(
        s, r, v
    ),
    UPDATE_FEATURES: lambda s, r, v, c: features.translate_update_features(
        s, r, v.node_config().node_id
    ),
    DESCRIBE_TOPIC_PARTITIONS: lambda s, r, v, c: (
        topic_partitions.translate_describe_topic_partitions(s, r, v)
    ),
    ApiKey.ADD_PARTITIONS_TO_TXN: lambda s, r, v, c: transactions.translate_add_partitions_to_txn(
        s, r
    ),
    ApiKey.END_TXN: lambda s, r, v, c: transactions.translate_end_txn(s, r),
    ApiKey.LIST_TRANSACTIONS: lambda s, r, v, c: transactions.translate_list_transactions(s, r),
    ApiKey.DESCRIBE_TRANSACTIONS: lambda s, r, v, c: transactions.translate_describe_transactions(
        s, r
    ),
    ApiKey.ADD_OFFSETS_TO_TXN: lambda s, r, v, c: transactions.translate_add_offsets_to_txn(s, r),
    ApiKey.TXN_OFFSET_COMMIT: lambda s, r, v, c: transactions.translate_txn_offset_commit(s, r),
    ApiKey.DESCRIBE_PRODUCERS: lambda s, r, v, c: producer_admin.translate_describe_producers(s, r),
    ApiKey.WRITE_TXN_MARKERS: lambda s, r, v, c: producer_admin.translate_write_txn_markers(s, r),
}


TRANSLATORS[SASL_HANDSHAKE] = lambda s, r, v, c: sasl_apis.translate_sasl_handshake(s, r)
TRANSLATORS[SASL_AUTHENTICATE] = lambda s, r, v, c: sasl_apis.translate_sasl_authenticate(s, r)

UNKNOWN_CALLER = Caller(None, "")


def translate(
    schema: ApiSchema, request: Any, view: ClusterView, caller: Caller = UNKNOWN_CALLER
) -> Forward | Answer:
    return TRANSLATORS[schema.api_key](schema, request, view, caller)
