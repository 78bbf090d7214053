"""Which Kafka apis and versions this listener serves, and their kio entity classes.

Only what is implemented and tested is listed: ApiVersions advertises exactly this table.
Versions here are non-flexible except ApiVersions v3 and v4, ListOffsets v6 to v9, Metadata
v9 to v12, DescribeLogDirs v2 to v4, AlterReplicaLogDirs v2, OffsetFetch v6 to v8,
FindCoordinator v3 and v4, IncrementalAlterConfigs v1, ElectLeaders v2, and DescribeQuorum,
DescribeCluster, AddRaftVoter, RemoveRaftVoter, ConsumerGroupHeartbeat,
ConsumerGroupDescribe, DescribeTopicPartitions, UpdateFeatures, ListConfigResources,
AlterPartitionReassignments, ListPartitionReassignments and UnregisterBroker (flexible only);
every common client (including librdkafka 2.0's kcat) can negotiate down to a non-flexible
version of the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from kio.index import load_request_schema, load_response_schema
from kio.serial import entity_reader, entity_writer
from kio.serial.readers import Reader
from kio.serial.writers import Writer
from kio.static.protocol import RequestPayload, ResponsePayload

from rillet.wire.api import ApiKey

# Kafka apis served here without an internal api of the same number.
DESCRIBE_CONFIGS = 32
ALTER_CONFIGS = 33
DESCRIBE_CLUSTER = 60
SASL_HANDSHAKE = 17
SASL_AUTHENTICATE = 36
CONSUMER_GROUP_DESCRIBE = 69
DESCRIBE_TOPIC_PARTITIONS = 75
UPDATE_FEATURES = 57
LIST_CONFIG_RESOURCES = 74

SUPPORTED: dict[int, tuple[int, int]] = {
    ApiKey.PRODUCE: (3, 8),  # 8 adds error messages
    ApiKey.FETCH: (4, 11),
    ApiKey.LIST_OFFSETS: (1, 9),  # 6 to 9 are flexible; 7 adds max timestamp (-3)
    ApiKey.METADATA: (1, 12),  # 9+ are flexible; 10+ name topics by id too
    ApiKey.OFFSET_COMMIT: (2, 7),
    ApiKey.OFFSET_FETCH: (1, 8),  # 6 to 8 are flexible; 8 asks for several groups
    ApiKey.FIND_COORDINATOR: (0, 4),  # 3+ are flexible; 4 batches keys
    ApiKey.JOIN_GROUP: (0, 5),
    ApiKey.HEARTBEAT: (0, 3),
    ApiKey.LEAVE_GROUP: (0, 1),
    ApiKey.SYNC_GROUP: (0, 3),
    ApiKey.DESCRIBE_GROUPS: (0, 4),
    ApiKey.LIST_GROUPS: (0, 2),
    DESCRIBE_CONFIGS: (1, 3),
    ALTER_CONFIGS: (0, 1),
    ApiKey.INCREMENTAL_ALTER_CONFIGS: (0, 1),  # 1 is flexible
    DESCRIBE_CLUSTER: (0, 1),
    ApiKey.API_VERSIONS: (0, 4),
    ApiKey.CREATE_TOPICS: (2, 4),
    ApiKey.DELETE_TOPICS: (1, 3),
    ApiKey.DELETE_RECORDS: (0, 1),
    ApiKey.INIT_PRODUCER_ID: (0, 1),
    ApiKey.OFFSET_FOR_LEADER_EPOCH: (2, 3),
    ApiKey.CREATE_PARTITIONS: (0, 1),
    ApiKey.DELETE_GROUPS: (0, 1),
    ApiKey.OFFSET_DELETE: (0, 0),
    ApiKey.DESCRIBE_ACLS: (1, 3),  # 2 and 3 are flexible; 0 left Kafka in 4.0
    ApiKey.CREATE_ACLS: (1, 3),
    ApiKey.DELETE_ACLS: (1, 3),
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: (0, 0),  # flexible
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: (0, 0),  # flexible
    SASL_HANDSHAKE: (1, 1),  # v0 (raw tokens after the handshake) is not served
    SASL_AUTHENTICATE: (0, 1),
    ApiKey.CONSUMER_GROUP_HEARTBEAT: (0, 1),  # flexible
    CONSUMER_GROUP_DESCRIBE: (0, 1),  # flexible
    ApiKey.DESCRIBE_LOG_DIRS: (1, 4),  # 2 to 4 are flexible; 0 left Kafka in 4.0
    ApiKey.ALTER_REPLICA_LOG_DIRS: (1, 2),  # 2 is flexible; 0 left Kafka in 4.0
    ApiKey.DESCRIBE_QUORUM: (0, 2),  # flexible; 2 adds endpoints and error messages
    ApiKey.ADD_RAFT_VOTER: (0, 1),  # flexible; 1 adds ack_when_committed
    ApiKey.REMOVE_RAFT_VOTER: (0, 0),  # flexible
    ApiKey.ELECT_LEADERS: (0, 2),  # 2 is flexible; 0 knows only preferred elections
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: (0, 0),  # flexible
    ApiKey.LIST_PARTITION_REASSIGNMENTS: (0, 0),  # flexible
    ApiKey.UNREGISTER_BROKER: (0, 0),  # flexible
    DESCRIBE_TOPIC_PARTITIONS: (0, 0),  # flexible
    UPDATE_FEATURES: (0, 2),  # flexible
    LIST_CONFIG_RESOURCES: (0, 1),  # flexible; v0 was ListClientMetricsResources
    ApiKey.ADD_PARTITIONS_TO_TXN: (0, 2),
    ApiKey.ADD_OFFSETS_TO_TXN: (0, 2),
    ApiKey.END_TXN: (0, 2),
    ApiKey.TXN_OFFSET_COMMIT: (0, 3),  # 3 is flexible, with the group's generation (KIP-447)
    ApiKey.DESCRIBE_TRANSACTIONS: (0, 0),  # flexible
    ApiKey.LIST_TRANSACTIONS: (0, 0),  # flexible
    ApiKey.DESCRIBE_PRODUCERS: (0, 0),  # flexible
    ApiKey.WRITE_TXN_MARKERS: (1, 1),  # flexible; v0 left Kafka in 4.0
}


@dataclass(frozen=True, slots=True)
class ApiSchema:
    """The request and response classes of one api version, with their kio codecs."""

    api_key: int
    version: int
    request_type: type[RequestPayload]
    response_type: type[ResponsePayload]
    read_request: Reader[RequestPayload]  # (buffer, offset) -> (entity, bytes read)
    write_response: Writer[ResponsePayload]  # (buffer, entity) -> None

    @property
    def flexible(self) -> bool:
        return bool(self.request_type.__flexible__)


def served_versions() -> list[tuple[int, int]]:
    """Every (api key, version) in the table, in order."""
    return [(k, v) for k, (low, high) in sorted(SUPPORTED.items()) for v in range(low, high + 1)]


@cache
def served_schema(api_key: int, version: int) -> ApiSchema | None:
    """The classes and codecs of one served api version (None when not served).

    Loaded on first use and kept: loading all of them up front took about 0.4 s of CPU at
    every node start, paid by each of a cluster's nodes although most Kafka clients use a
    dozen of the hundred versions.
    """
    span = SUPPORTED.get(api_key)
    if span is None or not span[0] <= version <= span[1]:
        return None
    req = load_request_schema(api_key, version)
    resp = load_response_schema(api_key, version)
    return ApiSchema(api_key, version, req, resp, entity_reader(req), entity_writer(resp))


# Names of the apis above that rillet's ApiKey lacks (no internal api of that number).
_KAFKA_ONLY_NAMES = {
    DESCRIBE_CONFIGS: "DESCRIBE_CONFIGS",
    DESCRIBE_CLUSTER: "DESCRIBE_CLUSTER",
    ALTER_CONFIGS: "ALTER_CONFIGS",
    CONSUMER_GROUP_DESCRIBE: "CONSUMER_GROUP_DESCRIBE",
    DESCRIBE_TOPIC_PARTITIONS: "DESCRIBE_TOPIC_PARTITIONS",
    UPDATE_FEATURES: "UPDATE_FEATURES",
    LIST_CONFIG_RESOURCES: "LIST_CONFIG_RESOURCES",
}


def api_name(api_key: int) -> str:
    name = _KAFKA_ONLY_NAMES.get(api_key)
    if name is not None:
        return name
    try:
        return ApiKey(api_key).name
    except ValueError:
        return f"api {api_key}"
