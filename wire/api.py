"""Api numbers. Public apis follow Kafka's numbering; internal ones start at 1000."""

from __future__ import annotations

from enum import IntEnum


class ApiKey(IntEnum):
    """Api number in every request header. Never renumber a member."""

    PRODUCE = 0
    FETCH = 1
    LIST_OFFSETS = 2
    METADATA = 3
    OFFSET_COMMIT = 8
    OFFSET_FETCH = 9
    FIND_COORDINATOR = 10
    JOIN_GROUP = 11
    HEARTBEAT = 12
    LEAVE_GROUP = 13
    SYNC_GROUP = 14
    DESCRIBE_GROUPS = 15
    LIST_GROUPS = 16
    SASL_HANDSHAKE = 17
    API_VERSIONS = 18
    CREATE_TOPICS = 19
    DELETE_TOPICS = 20
    DELETE_RECORDS = 21
    INIT_PRODUCER_ID = 22
    OFFSET_FOR_LEADER_EPOCH = 23
    ADD_PARTITIONS_TO_TXN = 24
    ADD_OFFSETS_TO_TXN = 25
    END_TXN = 26
    WRITE_TXN_MARKERS = 27
    TXN_OFFSET_COMMIT = 28
    DESCRIBE_ACLS = 29
    CREATE_ACLS = 30
    DELETE_ACLS = 31
    ALTER_REPLICA_LOG_DIRS = 34
    DESCRIBE_LOG_DIRS = 35
    SASL_AUTHENTICATE = 36
    CREATE_PARTITIONS = 37
    DELETE_GROUPS = 42
    ELECT_LEADERS = 43
    ALTER_PARTITION_REASSIGNMENTS = 45
    LIST_PARTITION_REASSIGNMENTS = 46
    OFFSET_DELETE = 47
    INCREMENTAL_ALTER_CONFIGS = 44
    DESCRIBE_USER_SCRAM_CREDENTIALS = 50
    ALTER_USER_SCRAM_CREDENTIALS = 51
    DESCRIBE_QUORUM = 55
    UPDATE_FEATURES = 57  # describes and raises rillet's feature level (feature_messages)
    DESCRIBE_PRODUCERS = 61
    UNREGISTER_BROKER = 64
    DESCRIBE_TRANSACTIONS = 65
    LIST_TRANSACTIONS = 66
    CONSUMER_GROUP_HEARTBEAT = 68
    ADD_RAFT_VOTER = 80
    REMOVE_RAFT_VOTER = 81
    # internal, broker to broker / broker to controller (1000, once a separate replica
    # fetch, is retired: followers send Fetch with their replica id; never reuse it)
    BROKER_REGISTRATION = 1001
    BROKER_HEARTBEAT = 1002
    ALTER_PARTITION = 1003
    METADATA_FETCH = 1004
    ALLOCATE_PRODUCER_IDS = 1005
    NODE_AUTH_BEGIN = 1006
    NODE_AUTH_PROVE = 1007
    TXN_MARKERS_WRITTEN = 1008
    OBSERVE_RAFT = 1030  # a Raft observer asks the leader for the log
    ALTER_BROKER_CONFIGS = 1044  # Kafka's IncrementalAlterConfigs (44) for broker resources
    # classic-group apis whose Kafka numbers serve another shape here: 1000 + Kafka's number
    CLASSIC_LEAVE_GROUP = 1013
    CLASSIC_DESCRIBE_GROUPS = 1015
    CLASSIC_LIST_GROUPS = 1016


EARLIEST_TIMESTAMP = -2
LATEST_TIMESTAMP = -1
MAX_TIMESTAMP = -3  # the record with the largest timestamp (Kafka's ListOffsets v7+)
EARLIEST_LOCAL_TIMESTAMP = -4  # v8+: the log start here, all of the log being local
LATEST_TIERED_TIMESTAMP = -5  # v9+: nothing is tiered here, so no offset
CONSUMER_REPLICA_ID = -1
