"""Which ACL each request needs, decided without I/O: Kafka's error per resource type,
requests refused whole, Metadata / ListGroups / OffsetFetch trimmed to what the principal
may describe, super users, nodes checked like clients on client apis (and forwarded
changes decided as the client they were forwarded for), and cached decisions that follow ACL
changes."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rillet.broker.kafka.configs import CLUSTER_DESCRIBE_GATE
from rillet.broker.security.authorizer import Authorizer
from rillet.broker.security.forwarded_caller import naming_the_client
from rillet.broker.security.request_authorization import RequestAuthorizer
from rillet.broker.security.session import Session
from rillet.metadata_quorum.acl_registry import AclCreated, AclRegistry, AclRemoved
from rillet.wire import group_messages as gm
from rillet.wire import log_dir_messages as ldm
from rillet.wire import messages as m
from rillet.wire import transaction_messages as tm
from rillet.wire.acl_messages import CreateAclsRequest
from rillet.wire.acls import (
    CLUSTER_NAME,
    AclBinding,
    Operation,
    PatternType,
    Permission,
    ResourceType,
)
from rillet.wire.api import ApiKey
from rillet.wire.cluster_messages import DescribeQuorumRequest, MetadataFetchRequest
from rillet.wire.error_codes import ErrorCode
from rillet.wire.forwarding import ForwardedFor

ALICE = Session("kafka", "10.0.0.1", "User:alice")


def acl(
    rtype: ResourceType, name: str, op: Operation, pattern: PatternType = PatternType.LITERAL
) -> AclCreated:
    return AclCreated(AclBinding(rtype, name, pattern, "User:alice", "*", op, Permission.ALLOW))


def authorizer(*records: AclCreated) -> tuple[RequestAuthorizer, AclRegistry]:
    registry = AclRegistry()
    for r in records:
        registry.apply(r)
    return RequestAuthorizer(Authorizer(frozenset({"User:admin"})), lambda: registry), registry


def produce(*topics: str) -> m.ProduceRequest:
    return m.ProduceRequest(-1, 1000, [m.ProducePartitionData(t, 0, b"") for t in topics])


def error(auth: RequestAuthorizer, api: ApiKey, request: Any, session: Session = ALICE) -> Any:
    verdict = auth.check(api, request, session)
    return None if verdict is None else verdict.error


def test_each_resource_type_has_kafkas_error_and_a_line_naming_what_was_refused() -> None:
    auth, _ = authorizer()
    verdict = auth.check(ApiKey.PRODUCE, produce("orders"), ALICE)
    assert verdict is not None and verdict.error == ErrorCode.AUTHORIZATION_FAILED
    assert verdict.message == "User:alice may not WRITE topic 'orders'"
    join = gm.FindCoordinatorRequest("billing", 0)
    assert error(auth, ApiKey.FIND_COORDINATOR, join) == ErrorCode.GROUP_AUTHORIZATION_FAILED
    quorum = m.DescribeQuorumRequest()
    assert error(auth, ApiKey.DESCRIBE_QUORUM, quorum) == ErrorCode.CLUSTER_AUTHORIZATION_FAILED


def test_super_users_are_not_checked() -> None:
    auth, _ = authorizer()
    admin = Session("native", "10.0.0.3", "User:admin")
    assert auth.check(ApiKey.DELETE_TOPICS, m.DeleteTopicsRequest(["orders"]), admin) is None


def test_a_node_is_checked_like_any_client_on_client_apis() -> None:
    """The node handshake grants the internal apis, not the ACLs: what an anonymous peer
    that passed it once did (read, create topics, grant itself every topic) is refused."""
    auth, _ = authorizer()
    node = Session("native", "10.0.0.2", node_id=2)
    acls = CreateAclsRequest(
        [
            AclBinding(
                ResourceType.TOPIC,
                "*",
                PatternType.LITERAL,
                "User:ANONYMOUS",
                "*",
                Operation.ALL,
                Permission.ALLOW,
            )
        ]
    )
    assert error(auth, ApiKey.PRODUCE, produce("orders"), node) == ErrorCode.AUTHORIZATION_FAILED
    fetch = m.FetchRequest(100, 1, 1024, [m.FetchPartition("orders", 0, 0, 1024)])
    assert error(auth, ApiKey.FETCH, fetch, node) == ErrorCode.AUTHORIZATION_FAILED
    create = m.CreateTopicsRequest([m.NewTopic("mine", 1)])
    assert error(auth, ApiKey.CREATE_TOPICS, create, node) == ErrorCode.AUTHORIZATION_FAILED
    assert error(auth, ApiKey.CREATE_ACLS, acls, node) == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    metadata = auth.check(ApiKey.METADATA, m.MetadataRequest(None), node)
    assert metadata is not None and metadata.reshape is not None  # trimmed, as for a client


def test_a_node_calls_its_internal_apis_without_acls() -> None:
    """The internal-api gate decided those (for the node the connection proved)."""
    auth, _ = authorizer()
    node = Session("native", "10.0.0.2", node_id=2)
    follower = m.FetchRequest(100, 1, 1024, [m.FetchPartition("orders", 0, 0, 1024)], 2)
    assert auth.check(ApiKey.FETCH, follower, node) is None
    assert auth.check(ApiKey.METADATA_FETCH, MetadataFetchRequest("c", b"", 0), node) is None
    # The same follower fetch from a client that is no node needs READ, as before.
    assert error(auth, ApiKey.FETCH, follower) == ErrorCode.AUTHORIZATION_FAILED


def test_a_change_a_node_forwarded_is_decided_as_the_client_it_names() -> None:
    auth, _ = authorizer(acl(ResourceType.CLUSTER, CLUSTER_NAME, Operation.CREATE))
    node = Session("native", "10.0.0.2", node_id=2)
    create = m.CreateTopicsRequest([m.NewTopic("etl", 1)])
    from_alice = naming_the_client(create, ALICE)
    assert from_alice.forwarded_for == ForwardedFor("User:alice", "10.0.0.1")
    forwarded = replace(from_alice, forwarded=True)
    assert auth.check(ApiKey.CREATE_TOPICS, forwarded, node) is None
    as_bob = replace(forwarded, forwarded_for=ForwardedFor("User:bob", "10.0.0.1"))
    assert error(auth, ApiKey.CREATE_TOPICS, as_bob, node) == ErrorCode.AUTHORIZATION_FAILED
    unnamed = replace(forwarded, forwarded_for=None)  # decided as anonymous
    assert error(auth, ApiKey.CREATE_TOPICS, unnamed, node) == ErrorCode.AUTHORIZATION_FAILED


def test_a_describe_quorum_forwarded_to_the_raft_leader_is_decided_as_its_client() -> None:
    """Kafka's DescribeQuorum reaches the Raft leader over a node's link: the leader checks
    DESCRIBE on the cluster for the client that asked, not for the node that carried it."""
    auth, _ = authorizer(acl(ResourceType.CLUSTER, CLUSTER_NAME, Operation.DESCRIBE))
    node = Session("native", "10.0.0.2", node_id=2)
    asked = naming_the_client(DescribeQuorumRequest(leader_view=True), ALICE)
    assert asked.forwarded_for == ForwardedFor("User:alice", "10.0.0.1")
    forwarded = replace(asked, forwarded=True)
    assert auth.check(ApiKey.DESCRIBE_QUORUM, forwarded, node) is None
    as_bob = replace(forwarded, forwarded_for=ForwardedFor("User:bob", "10.0.0.1"))
    assert error(auth, ApiKey.DESCRIBE_QUORUM, as_bob, node) == (
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    )


def test_a_client_cannot_name_someone_else_as_the_one_it_forwards_for() -> None:
    auth, _ = authorizer()
    mallory = Session("native", "10.0.0.9", "User:mallory")
    forged = m.DeleteTopicsRequest(
        ["orders"], forwarded=True, forwarded_for=ForwardedFor("User:admin", "10.0.0.3")
    )
    assert error(auth, ApiKey.DELETE_TOPICS, forged, mallory) == ErrorCode.AUTHORIZATION_FAILED
    # What the dispatcher hands on names mallory, whatever mallory wrote.
    assert naming_the_client(forged, mallory).forwarded_for == ForwardedFor(
        "User:mallory", "10.0.0.9"
    )
    node = Session("native", "10.0.0.2", node_id=2)
    assert naming_the_client(forged, node) is forged  # a node's forward is left as it is


def test_a_request_naming_one_forbidden_topic_is_refused_whole() -> None:
    auth, _ = authorizer(acl(ResourceType.TOPIC, "orders", Operation.WRITE))
    assert error(auth, ApiKey.PRODUCE, produce("orders")) is None
    assert error(auth, ApiKey.PRODUCE, produce("orders", "audit")) == (
        ErrorCode.AUTHORIZATION_FAILED
    )


def test_create_topics_needs_create_on_the_cluster_or_each_topic() -> None:
    request = m.CreateTopicsRequest([m.NewTopic("etl-a", 1), m.NewTopic("etl-b", 1)])
    prefixed, _ = authorizer(
        acl(ResourceType.TOPIC, "etl-", Operation.CREATE, PatternType.PREFIXED)
    )
    assert error(prefixed, ApiKey.CREATE_TOPICS, request) is None
    cluster, _ = authorizer(acl(ResourceType.CLUSTER, CLUSTER_NAME, Operation.CREATE))
    assert error(cluster, ApiKey.CREATE_TOPICS, request) is None
    nothing, _ = authorizer(acl(ResourceType.TOPIC, "etl-a", Operation.CREATE))
    assert error(nothing, ApiKey.CREATE_TOPICS, request) == ErrorCode.AUTHORIZATION_FAILED


def test_idempotent_producers_need_idempotent_write_or_write_on_some_topic() -> None:
    request = m.InitProducerIdRequest()
    none, _ = authorizer()
    assert error(none, ApiKey.INIT_PRODUCER_ID, request) == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    writer, _ = authorizer(acl(ResourceType.TOPIC, "orders", Operation.WRITE))
    assert error(writer, ApiKey.INIT_PRODUCER_ID, request) is None
    reader, _ = authorizer(acl(ResourceType.TOPIC, "orders", Operation.READ))
    assert error(reader, ApiKey.INIT_PRODUCER_ID, request) == (
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    )


def _metadata(*names: str) -> m.MetadataResponse:
    return m.MetadataResponse("c", 1, [], [m.TopicMetadata(n, 0, []) for n in names])


def test_metadata_hides_what_the_principal_may_not_describe() -> None:
    auth, _ = authorizer(acl(ResourceType.TOPIC, "orders", Operation.READ))
    every = auth.check(ApiKey.METADATA, m.MetadataRequest(None), ALICE)
    assert every is not None and every.error is None and every.reshape is not None
    assert [t.name for t in every.reshape(_metadata("orders", "audit")).topics] == ["orders"]
    named = auth.check(ApiKey.METADATA, m.MetadataRequest(["orders", "audit"]), ALICE)
    assert named is not None and named.reshape is not None
    topics = named.reshape(_metadata("orders", "audit")).topics
    assert [(t.name, t.error_code) for t in topics] == [
        ("orders", 0),
        ("audit", ErrorCode.AUTHORIZATION_FAILED),
    ]


def test_groups_and_offsets_are_trimmed_too() -> None:
    auth, _ = authorizer(
        acl(ResourceType.GROUP, "etl-", Operation.READ, PatternType.PREFIXED),
        acl(ResourceType.TOPIC, "orders", Operation.READ),
    )
    listed = auth.check(ApiKey.LIST_GROUPS, gm.ListGroupsRequest(), ALICE)
    assert listed is not None and listed.reshape is not None
    groups = gm.ListGroupsResponse(0, [gm.GroupListing("etl-1", 1, 1), gm.GroupListing("x", 1, 1)])
    assert [g.group_id for g in listed.reshape(groups).groups] == ["etl-1"]
    fetch_all = auth.check(ApiKey.OFFSET_FETCH, gm.OffsetFetchRequest("etl-1"), ALICE)
    assert fetch_all is not None and fetch_all.reshape is not None
    offsets = gm.OffsetFetchResponse(
        0, [gm.FetchedOffset("orders", 0, 5, "", 0), gm.FetchedOffset("audit", 0, 7, "", 0)]
    )
    assert [o.topic for o in fetch_all.reshape(offsets).offsets] == ["orders"]
    assert error(auth, ApiKey.OFFSET_FETCH, gm.OffsetFetchRequest("other")) == (
        ErrorCode.GROUP_AUTHORIZATION_FAILED
    )


def test_cached_decisions_follow_acl_changes() -> None:
    auth, registry = authorizer()
    assert error(auth, ApiKey.PRODUCE, produce("orders")) == ErrorCode.AUTHORIZATION_FAILED
    grant = acl(ResourceType.TOPIC, "orders", Operation.WRITE)
    registry.apply(grant)
    assert error(auth, ApiKey.PRODUCE, produce("orders")) is None
    registry.apply(AclRemoved(grant.binding))
    assert error(auth, ApiKey.PRODUCE, produce("orders")) == ErrorCode.AUTHORIZATION_FAILED


def test_auto_creation_needs_describe_and_create_on_the_cluster_or_the_topic() -> None:
    """Kafka's rule for a topic created by asking for it in Metadata."""
    auth, _ = authorizer(
        acl(ResourceType.TOPIC, "etl-", Operation.DESCRIBE, PatternType.PREFIXED),
        acl(ResourceType.TOPIC, "etl-a", Operation.CREATE),
        acl(ResourceType.TOPIC, "other", Operation.CREATE),
    )
    may_create = auth.creator(ALICE)
    assert may_create("etl-a")
    assert not may_create("etl-b")  # DESCRIBE, but no CREATE
    assert not may_create("other")  # CREATE, but no DESCRIBE
    on_cluster, _ = authorizer(
        acl(ResourceType.TOPIC, "etl-", Operation.DESCRIBE, PatternType.PREFIXED),
        acl(ResourceType.CLUSTER, CLUSTER_NAME, Operation.CREATE),
    )
    assert on_cluster.creator(ALICE)("etl-b")
    assert auth.creator(Session("native", "10.0.0.3", "User:admin"))("anything")


def test_log_dirs_and_a_brokers_settings_need_describe_on_the_cluster() -> None:
    """DescribeLogDirs, and DescribeConfigs on a broker (whose translation sends the same
    request, asking for nothing, as its gate), need DESCRIBE on the cluster."""
    gate = CLUSTER_DESCRIBE_GATE
    refused, _ = authorizer(acl(ResourceType.TOPIC, "*", Operation.DESCRIBE))
    assert error(refused, ApiKey.DESCRIBE_LOG_DIRS, gate) == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    allowed, _ = authorizer(acl(ResourceType.CLUSTER, CLUSTER_NAME, Operation.DESCRIBE))
    assert error(allowed, ApiKey.DESCRIBE_LOG_DIRS, gate) is None
    move = ldm.AlterReplicaLogDirsRequest([])  # moving a replica needs ALTER, as on Kafka
    assert error(allowed, ApiKey.ALTER_REPLICA_LOG_DIRS, move) == (
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    )
    alter, _ = authorizer(acl(ResourceType.CLUSTER, CLUSTER_NAME, Operation.ALTER))
    assert error(alter, ApiKey.ALTER_REPLICA_LOG_DIRS, move) is None


def test_a_batched_find_coordinator_needs_describe_on_every_group() -> None:
    auth, _ = authorizer(acl(ResourceType.GROUP, "billing", Operation.DESCRIBE))
    one = gm.FindCoordinatorRequest("billing", 0)
    assert error(auth, ApiKey.FIND_COORDINATOR, one) is None
    both = gm.FindCoordinatorRequest("billing", 0, ["payroll"])
    assert error(auth, ApiKey.FIND_COORDINATOR, both) == ErrorCode.GROUP_AUTHORIZATION_FAILED


def test_a_batched_offset_fetch_answers_each_group_on_its_own() -> None:
    auth, _ = authorizer(
        acl(ResourceType.GROUP, "billing", Operation.DESCRIBE),
        acl(ResourceType.GROUP, "audit", Operation.DESCRIBE),
        acl(ResourceType.TOPIC, "orders", Operation.DESCRIBE),
    )
    request = gm.OffsetFetchRequest(
        "payroll",
        None,
        [
            gm.OffsetFetchGroup("billing", None),
            gm.OffsetFetchGroup("audit", [gm.GroupTopicPartitions("secret", [0])]),
        ],
    )
    verdict = auth.check(ApiKey.OFFSET_FETCH, request, ALICE)
    assert verdict is not None and verdict.error is None and verdict.reshape is not None
    answer = gm.OffsetFetchResponse(
        ErrorCode.NONE,
        [gm.FetchedOffset("orders", 0, 1)],
        more_groups=[
            gm.GroupOffsets(
                "billing", 0, [gm.FetchedOffset("orders", 0, 5), gm.FetchedOffset("secret", 0, 6)]
            ),
            gm.GroupOffsets("audit", 0, [gm.FetchedOffset("secret", 0, 7)]),
        ],
    )
    trimmed = verdict.reshape(answer)
    assert (trimmed.error_code, trimmed.offsets) == (ErrorCode.GROUP_AUTHORIZATION_FAILED, [])
    assert trimmed.more_groups == [
        gm.GroupOffsets("billing", 0, [gm.FetchedOffset("orders", 0, 5)]),
        gm.GroupOffsets("audit", ErrorCode.AUTHORIZATION_FAILED, []),
    ]


def test_transactions_need_write_on_their_transactional_id() -> None:
    txn = ResourceType.TRANSACTIONAL_ID
    init = m.InitProducerIdRequest("app", 60_000)
    add = tm.AddPartitionsToTxnRequest("app", 7, 0, [tm.TxnTopicPartition("orders", 0)])
    end = tm.EndTxnRequest("app", 7, 0, True)
    offsets = tm.AddOffsetsToTxnRequest("app", 7, 0, "billing")
    none, _ = authorizer(acl(ResourceType.TOPIC, "orders", Operation.WRITE))
    denied = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    for api, request in [
        (ApiKey.FIND_COORDINATOR, gm.FindCoordinatorRequest("app", 1)),
        (ApiKey.INIT_PRODUCER_ID, init),
        (ApiKey.ADD_PARTITIONS_TO_TXN, add),
        (ApiKey.END_TXN, end),
        (ApiKey.ADD_OFFSETS_TO_TXN, offsets),
    ]:
        assert error(none, api, request) == denied, api
    writer, _ = authorizer(
        acl(txn, "app", Operation.WRITE), acl(ResourceType.TOPIC, "orders", Operation.WRITE)
    )
    assert error(writer, ApiKey.INIT_PRODUCER_ID, init) is None
    find = gm.FindCoordinatorRequest("app", 1)
    assert error(writer, ApiKey.FIND_COORDINATOR, find) is None  # WRITE implies DESCRIBE
    assert error(writer, ApiKey.ADD_PARTITIONS_TO_TXN, add) is None
    assert error(writer, ApiKey.END_TXN, end) is None
    assert error(writer, ApiKey.ADD_OFFSETS_TO_TXN, offsets) == ErrorCode.GROUP_AUTHORIZATION_FAILED
    other = tm.AddPartitionsToTxnRequest("app", 7, 0, [tm.TxnTopicPartition("secret", 0)])
    assert error(writer, ApiKey.ADD_PARTITIONS_TO_TXN, other) == ErrorCode.AUTHORIZATION_FAILED


def test_list_transactions_shows_only_what_the_principal_may_describe() -> None:
    auth, _ = authorizer(acl(ResourceType.TRANSACTIONAL_ID, "app", Operation.DESCRIBE))
    verdict = auth.check(ApiKey.LIST_TRANSACTIONS, tm.ListTransactionsRequest(), ALICE)
    assert verdict is not None and verdict.reshape is not None
    listed = tm.ListTransactionsResponse(
        0, [tm.TxnListing("app", 1, "Ongoing"), tm.TxnListing("hidden", 2, "Empty")]
    )
    assert verdict.reshape(listed).transactions == [tm.TxnListing("app", 1, "Ongoing")]
    describe = tm.DescribeTransactionsRequest(["app", "hidden"])
    assert error(auth, ApiKey.DESCRIBE_TRANSACTIONS, describe) == (
        ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    )
