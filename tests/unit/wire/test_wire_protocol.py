"""Protocol envelopes and message schemas: round trips of every request and response type,
strict validation that turns any bad header or body into MalformedMessage."""

from __future__ import annotations

import copy
import dataclasses
import enum
import inspect
import types
import typing
from collections.abc import Iterator
from typing import Annotated, Any, Union, get_args, get_origin

import cbor2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wire_helpers import header_frame, join_parts, one_frame, strategy_for

from rillet.wire import acl_messages as am
from rillet.wire import acls, forwarding
from rillet.wire import broker_admin_messages as bam
from rillet.wire import classic_group_messages as cgm
from rillet.wire import cluster_messages as cm
from rillet.wire import feature_messages as fm
from rillet.wire import group_messages as gm
from rillet.wire import leader_epoch_messages as lem
from rillet.wire import log_dir_messages as ldm
from rillet.wire import messages as m
from rillet.wire import producer_admin_messages as pam
from rillet.wire import raft_voter_messages as rvm
from rillet.wire import reassignment_messages as ram
from rillet.wire import record_deletion_messages as rdm
from rillet.wire import sasl_messages as sm
from rillet.wire import transaction_messages as tm
from rillet.wire import user_messages as um
from rillet.wire.acls import AclBinding, AclFilter, Operation, PatternType, Permission, ResourceType
from rillet.wire.api import ApiKey
from rillet.wire.batch import build_batch
from rillet.wire.error_codes import ErrorCode, to_kafka
from rillet.wire.errors import MalformedMessage, UnknownApi, WireError
from rillet.wire.forwarding import ForwardedFor
from rillet.wire.frame import FileRegion, Frame
from rillet.wire.protocol import (
    PROTOCOL_VERSION,
    ErrorResponse,
    RequestHeader,
    decode_request,
    decode_response,
    encode_error_response,
    encode_request,
    encode_response,
    response_correlation_id,
    response_type_for,
)
from rillet.wire.schema import from_wire, to_wire

BATCH = build_batch([(1, b"k", b"v", [("h", b"x")])])
BATCH2 = build_batch([(2, None, b"w" * 300, None), (3, None, None, None)])
_ACL = AclBinding(
    ResourceType.TOPIC,
    "orders",
    PatternType.PREFIXED,
    "User:alice",
    "*",
    Operation.READ,
    Permission.ALLOW,
)


SAMPLE_REQUESTS: dict[type, Any] = {
    m.ProduceRequest: m.ProduceRequest(
        -1, 1000, [m.ProducePartitionData("t", 0, BATCH), m.ProducePartitionData("ü", 3, BATCH2)]
    ),
    m.FetchRequest: m.FetchRequest(
        500, 1, 1 << 20, [m.FetchPartition("t", 0, 5, 1024, 2, 1)], 7, b"\x02" * 32
    ),
    m.ListOffsetsRequest: m.ListOffsetsRequest([m.ListOffsetsPartition("t", 0, -2)]),
    m.MetadataRequest: m.MetadataRequest(["a", "b"]),
    m.CreateTopicsRequest: m.CreateTopicsRequest(
        [m.NewTopic("t", 3, 2, {"retention.ms": "5"})],
        100,
        True,
        forwarded_for=ForwardedFor("User:alice", "10.0.0.1"),
    ),
    m.DeleteTopicsRequest: m.DeleteTopicsRequest(["t", "u"], 10),
    m.AlterTopicConfigsRequest: m.AlterTopicConfigsRequest(
        [m.TopicConfigChange("t", {"retention.ms": "5"}, ["segment.bytes"], True)], 100
    ),
    m.CreatePartitionsRequest: m.CreatePartitionsRequest(
        [m.PartitionCount("t", 6)], 100, False, True, "req-1"
    ),
    sm.SaslHandshakeRequest: sm.SaslHandshakeRequest("SCRAM-SHA-256"),
    sm.SaslAuthenticateRequest: sm.SaslAuthenticateRequest(b"n,,n=alice,r=abc"),
    am.CreateAclsRequest: am.CreateAclsRequest([_ACL], True, ForwardedFor("User:bob", "::1")),
    am.DescribeAclsRequest: am.DescribeAclsRequest(
        AclFilter(ResourceType.TOPIC, "orders", PatternType.MATCH)
    ),
    am.DeleteAclsRequest: am.DeleteAclsRequest([AclFilter(principal="User:alice"), AclFilter()]),
    rdm.DeleteRecordsRequest: rdm.DeleteRecordsRequest(
        [rdm.DeleteRecordsPartition("t", 0, 40), rdm.DeleteRecordsPartition("t", 1, -1)], 500
    ),
    um.AlterUserScramCredentialsRequest: um.AlterUserScramCredentialsRequest(
        [um.ScramCredentialUpsert("alice", "SCRAM-SHA-256", 4096, b"salt", b"\x01" * 32)],
        [um.ScramCredentialDeletion("bob", "SCRAM-SHA-512")],
    ),
    um.DescribeUserScramCredentialsRequest: um.DescribeUserScramCredentialsRequest(["alice"]),
    m.ApiVersionsRequest: m.ApiVersionsRequest(),
    cm.DescribeQuorumRequest: cm.DescribeQuorumRequest(),
    ldm.DescribeLogDirsRequest: ldm.DescribeLogDirsRequest([ldm.LogDirTopic("t", [0, 2])]),
    ldm.AlterReplicaLogDirsRequest: ldm.AlterReplicaLogDirsRequest(
        [ldm.LogDirMove("/d", [ldm.LogDirTopic("t", [0])])]
    ),
    ram.AlterReassignmentsRequest: ram.AlterReassignmentsRequest(
        [ram.PartitionMove("t", 0, [2, 3, 4]), ram.PartitionMove("t", 1, None)]
    ),
    ram.ListReassignmentsRequest: ram.ListReassignmentsRequest([ram.TopicPartitions("t", [0])]),
    ram.ElectLeadersRequest: ram.ElectLeadersRequest(1, None),
    rvm.AddRaftVoterRequest: rvm.AddRaftVoterRequest(
        4, "0123456789abcdef0123456789abcdef", "127.0.0.1:9500", "127.0.0.1:9404"
    ),
    rvm.RemoveRaftVoterRequest: rvm.RemoveRaftVoterRequest(2),
    rvm.ObserveRaftRequest: rvm.ObserveRaftRequest(5, "127.0.0.1:9501"),
    fm.UpdateFeaturesRequest: fm.UpdateFeaturesRequest("", 2, True),
    bam.AlterBrokerConfigsRequest: bam.AlterBrokerConfigsRequest(
        [bam.BrokerConfigChange(-1, {"leader.replication.throttled.rate": "10"}, ["x"])]
    ),
    bam.UnregisterBrokerRequest: bam.UnregisterBrokerRequest(4),
    cm.BrokerRegistrationRequest: cm.BrokerRegistrationRequest(
        "c", b"\x01" * 32, 2, "inc-1", "127.0.0.1", 9092, "rack-a"
    ),
    cm.BrokerHeartbeatRequest: cm.BrokerHeartbeatRequest("c", b"", 2, 17, 40, True),
    cm.MetadataFetchRequest: cm.MetadataFetchRequest("c", b"a", 12, 100, 250),
    cm.AlterPartitionRequest: cm.AlterPartitionRequest("c", b"a", 2, 17, "tid", 3, 4, 9, [1, 2]),
    cm.AllocateProducerIdsRequest: cm.AllocateProducerIdsRequest("c", b"a", 2, 17),
    cm.NodeAuthBeginRequest: cm.NodeAuthBeginRequest("c", 2),
    cm.NodeAuthProveRequest: cm.NodeAuthProveRequest(b"n" * 16, b"p" * 32),
    m.InitProducerIdRequest: m.InitProducerIdRequest(),
    tm.AddPartitionsToTxnRequest: tm.AddPartitionsToTxnRequest(
        "app", 7, 1, [tm.TxnTopicPartition("t", 0)]
    ),
    tm.EndTxnRequest: tm.EndTxnRequest("app", 7, 1, True),
    tm.AddOffsetsToTxnRequest: tm.AddOffsetsToTxnRequest("app", 7, 1, "g"),
    tm.ListTransactionsRequest: tm.ListTransactionsRequest(["Ongoing"], [7]),
    tm.DescribeTransactionsRequest: tm.DescribeTransactionsRequest(["app"]),
    tm.TxnOffsetCommitRequest: tm.TxnOffsetCommitRequest(
        "app", "g", 7, 1, [tm.TxnCommitOffset("t", 0, 42, "md")]
    ),
    tm.TxnMarkersWrittenRequest: tm.TxnMarkersWrittenRequest(
        "c", b"a", 2, "app", 7, 1, [tm.TxnTopicPartition("t", 0)]
    ),
    pam.DescribeProducersRequest: pam.DescribeProducersRequest([tm.TxnTopicPartition("t", 0)]),
    pam.WriteTxnMarkersRequest: pam.WriteTxnMarkersRequest(
        [pam.TxnMarkerSpec(7, 1, False, -1, [tm.TxnTopicPartition("t", 0)])]
    ),
    lem.OffsetForLeaderEpochRequest: lem.OffsetForLeaderEpochRequest(
        [lem.EpochQuery("t", 0, 3, 4)]
    ),
    gm.FindCoordinatorRequest: gm.FindCoordinatorRequest("g"),
    gm.ConsumerGroupHeartbeatRequest: gm.ConsumerGroupHeartbeatRequest(
        "g", "m1", 10000, ["t"], None, "sticky", "host-a", "h", [gm.GroupTopicPartitions("t", [0])]
    ),
    gm.LeaveGroupRequest: gm.LeaveGroupRequest("g", "m1"),
    gm.OffsetCommitRequest: gm.OffsetCommitRequest(
        "g", "m1", 3, [gm.OffsetCommitPartition("t", 0, 42, "md")]
    ),
    gm.OffsetFetchRequest: gm.OffsetFetchRequest("g", None),
    gm.ListGroupsRequest: gm.ListGroupsRequest(),
    gm.DescribeGroupsRequest: gm.DescribeGroupsRequest(["g"]),
    gm.DeleteGroupsRequest: gm.DeleteGroupsRequest(["g", "h"]),
    gm.DeleteGroupOffsetsRequest: gm.DeleteGroupOffsetsRequest(
        "g", [gm.GroupTopicPartitions("t", [0, 1])]
    ),
    cgm.ClassicJoinGroupRequest: cgm.ClassicJoinGroupRequest(
        "g",
        45_000,
        300_000,
        "",
        "instance-1",
        "consumer",
        [cgm.ClassicProtocol("range", b"\x00\x01"), cgm.ClassicProtocol("roundrobin", b"")],
        "client-1",
        "/127.0.0.1",
        True,
    ),
    cgm.ClassicSyncGroupRequest: cgm.ClassicSyncGroupRequest(
        "g", 3, "m1", None, "consumer", "range", [cgm.ClassicMemberAssignment("m1", b"\x07")]
    ),
    cgm.ClassicHeartbeatRequest: cgm.ClassicHeartbeatRequest("g", 3, "m1", "instance-1"),
    cgm.ClassicLeaveGroupRequest: cgm.ClassicLeaveGroupRequest(
        "g", [cgm.ClassicLeavingMember("m1"), cgm.ClassicLeavingMember("", "instance-1")]
    ),
    cgm.ClassicDescribeGroupsRequest: cgm.ClassicDescribeGroupsRequest(["g", "h"]),
    cgm.ClassicListGroupsRequest: cgm.ClassicListGroupsRequest(["Stable"]),
}
SAMPLE_RESPONSES: dict[type, Any] = {
    m.ProduceResponse: m.ProduceResponse(
        [
            m.ProducePartitionResponse("t", 0, 0, 10, 1234, 0, None),
            m.ProducePartitionResponse("u", 1, 6, error_message="moved"),
        ]
    ),
    m.FetchResponse: m.FetchResponse(
        [
            m.FetchPartitionResponse("t", 0, 0, 10, 0, BATCH, 11, -1, -1, 2, 3),
            m.FetchPartitionResponse("t", 1, 1, -1, -1, b""),
        ]
    ),
    um.AlterUserScramCredentialsResponse: um.AlterUserScramCredentialsResponse(91, "none"),
    um.DescribeUserScramCredentialsResponse: um.DescribeUserScramCredentialsResponse(
        [um.DescribedUser("alice", 0, [um.CredentialInfo("SCRAM-SHA-256", 4096)])]
    ),
    sm.SaslHandshakeResponse: sm.SaslHandshakeResponse(0, ["SCRAM-SHA-256", "PLAIN"]),
    sm.SaslAuthenticateResponse: sm.SaslAuthenticateResponse(58, "failed", b""),
    am.CreateAclsResponse: am.CreateAclsResponse([am.AclOutcome(0), am.AclOutcome(42, "bad")]),
    am.DescribeAclsResponse: am.DescribeAclsResponse(0, None, [_ACL]),
    am.DeleteAclsResponse: am.DeleteAclsResponse([am.DeletedAcls(0, None, [_ACL])]),
    rdm.DeleteRecordsResponse: rdm.DeleteRecordsResponse(
        [
            rdm.DeleteRecordsPartitionResponse("t", 0, 0, 40),
            rdm.DeleteRecordsPartitionResponse("t", 1, 1),
        ]
    ),
    m.ListOffsetsResponse: m.ListOffsetsResponse(
        [m.ListOffsetsPartitionResponse("t", 0, 0, 42, 1000)]
    ),
    m.MetadataResponse: m.MetadataResponse(
        "cluster",
        1,
        [m.BrokerInfo(1, "h1", 9092, "rack-a"), m.BrokerInfo(2, "h2", 9093)],
        [m.TopicMetadata("t", 0, [m.PartitionMetadata(0, 1, 5, [1, 2], [1], 0)], {"k": "v"})],
    ),
    m.CreateTopicsResponse: m.CreateTopicsResponse([m.TopicResult("t", 36, "exists")]),
    m.CreatePartitionsResponse: m.CreatePartitionsResponse([m.TopicResult("t", 37, "fewer")], 9),
    m.AlterTopicConfigsResponse: m.AlterTopicConfigsResponse([m.TopicResult("t", 40, "bad")], 3),
    m.DeleteTopicsResponse: m.DeleteTopicsResponse([m.TopicResult("t", 0)]),
    m.ApiVersionsResponse: m.ApiVersionsResponse([m.ApiVersionRange(0, 0, 0)]),
    cm.DescribeQuorumResponse: cm.DescribeQuorumResponse(
        0,
        1,
        2,
        7,
        [1, 2, 3],
        99,
        [cm.BrokerStatus(1, "h", 9092, 5, False, "r"), cm.BrokerStatus(2, "h", 9093, 6, True)],
        1,
        3,
        ["t-0"],
    ),
    ldm.DescribeLogDirsResponse: ldm.DescribeLogDirsResponse(
        0, "/d", 100, 40, [ldm.LogDirPartition("t", 0, 12, 0)]
    ),
    ldm.AlterReplicaLogDirsResponse: ldm.AlterReplicaLogDirsResponse(
        [ldm.LogDirMoveResult("t", 0, 57)]
    ),
    ram.AlterReassignmentsResponse: ram.AlterReassignmentsResponse(
        0, None, [ram.PartitionOutcome("t", 0, 0), ram.PartitionOutcome("t", 1, 85, "none")]
    ),
    ram.ListReassignmentsResponse: ram.ListReassignmentsResponse(
        0, [ram.ReassignmentStatus("t", 0, [2, 3, 4, 1], [4], [1])]
    ),
    rvm.RaftVoterResponse: rvm.RaftVoterResponse(126, "n4 is already a voter"),
    fm.UpdateFeaturesResponse: fm.UpdateFeaturesResponse(
        0, None, "rillet.metadata.version", 2, 1, 2, [fm.NodeFeatureLevel(1, 2)]
    ),
    bam.AlterBrokerConfigsResponse: bam.AlterBrokerConfigsResponse(
        [bam.BrokerConfigResult(2, 40, "no")]
    ),
    bam.UnregisterBrokerResponse: bam.UnregisterBrokerResponse(102, "not registered"),
    ram.ElectLeadersResponse: ram.ElectLeadersResponse(
        0, None, [ram.PartitionOutcome("t", 0, 84, "the preferred replica leads")]
    ),
    cm.BrokerRegistrationResponse: cm.BrokerRegistrationResponse(0, 1, 44),
    cm.BrokerHeartbeatResponse: cm.BrokerHeartbeatResponse(41, 3, True, "not the controller"),
    cm.MetadataFetchResponse: cm.MetadataFetchResponse(
        0, [cm.MetadataEntry(13, 2, b"\xa1")], 12, 2, b"snap"
    ),
    cm.AlterPartitionResponse: cm.AlterPartitionResponse(0, 1, [1, 2], 4, 10),
    cm.AllocateProducerIdsResponse: cm.AllocateProducerIdsResponse(0, 1, 5000, 1000),
    cm.NodeAuthBeginResponse: cm.NodeAuthBeginResponse(0, b"s" * 16),
    cm.NodeAuthProveResponse: cm.NodeAuthProveResponse(58, b"", "refused"),
    m.InitProducerIdResponse: m.InitProducerIdResponse(0, 5001, 0),
    tm.AddPartitionsToTxnResponse: tm.AddPartitionsToTxnResponse(
        0, [tm.TxnPartitionResult("t", 0, 48)]
    ),
    tm.EndTxnResponse: tm.EndTxnResponse(51, "markers are being written"),
    tm.AddOffsetsToTxnResponse: tm.AddOffsetsToTxnResponse(0),
    tm.ListTransactionsResponse: tm.ListTransactionsResponse(
        0, [tm.TxnListing("app", 7, "Ongoing")], ["Bogus"]
    ),
    tm.DescribeTransactionsResponse: tm.DescribeTransactionsResponse(
        [tm.TxnDescription(0, "app", "Ongoing", 60000, 5, 7, 1, [tm.TxnTopicPartition("t", 0)])]
    ),
    tm.TxnOffsetCommitResponse: tm.TxnOffsetCommitResponse(0, [tm.TxnPartitionResult("t", 0, 0)]),
    tm.TxnMarkersWrittenResponse: tm.TxnMarkersWrittenResponse(41, 3),
    pam.DescribeProducersResponse: pam.DescribeProducersResponse(
        [pam.PartitionProducers("t", 0, 0, [pam.ActiveProducer(7, 1, 4, 1700000000000, -1, 12)])]
    ),
    pam.WriteTxnMarkersResponse: pam.WriteTxnMarkersResponse(
        [pam.MarkerResult(7, [tm.TxnPartitionResult("t", 0, 0)])]
    ),
    lem.OffsetForLeaderEpochResponse: lem.OffsetForLeaderEpochResponse(
        [lem.EpochEndOffset("t", 0, 0, 3, 42)]
    ),
    gm.FindCoordinatorResponse: gm.FindCoordinatorResponse(0, 1, "h", 9092),
    gm.ConsumerGroupHeartbeatResponse: gm.ConsumerGroupHeartbeatResponse(
        0, "m1", 4, 300, [gm.GroupTopicPartitions("t", [0, 1])]
    ),
    gm.LeaveGroupResponse: gm.LeaveGroupResponse(0),
    gm.OffsetCommitResponse: gm.OffsetCommitResponse(0, [gm.PartitionError("t", 0, 22)]),
    gm.OffsetFetchResponse: gm.OffsetFetchResponse(0, [gm.FetchedOffset("t", 0, 42, "md", 5)]),
    gm.ListGroupsResponse: gm.ListGroupsResponse(0, [gm.GroupListing("g", 3, 4)]),
    gm.DescribeGroupsResponse: gm.DescribeGroupsResponse(
        [
            gm.GroupDescription(
                "g",
                0,
                4,
                "sticky",
                [gm.MemberDescription("m1", None, "h", ["t"], None, [], [])],
            )
        ]
    ),
    gm.DeleteGroupOffsetsResponse: gm.DeleteGroupOffsetsResponse(
        0, [gm.PartitionError("t", 0, 0), gm.PartitionError("t", 1, 86)]
    ),
    gm.DeleteGroupsResponse: gm.DeleteGroupsResponse(
        [gm.DeletedGroup("g", 0), gm.DeletedGroup("h", 68, "group 'h' has 1 member(s)")]
    ),
    cgm.ClassicJoinGroupResponse: cgm.ClassicJoinGroupResponse(
        0, 3, "consumer", "range", "m1", "m1", [cgm.ClassicJoinedMember("m1", None, b"\x01")]
    ),
    cgm.ClassicSyncGroupResponse: cgm.ClassicSyncGroupResponse(0, "consumer", "range", b"\x02"),
    cgm.ClassicHeartbeatResponse: cgm.ClassicHeartbeatResponse(27),
    cgm.ClassicLeaveGroupResponse: cgm.ClassicLeaveGroupResponse(
        0, [cgm.ClassicLeftMember("m1", None, 0), cgm.ClassicLeftMember("", "i", 25)]
    ),
    cgm.ClassicDescribeGroupsResponse: cgm.ClassicDescribeGroupsResponse(
        [
            cgm.ClassicGroupDescription(
                0,
                "g",
                "Stable",
                "consumer",
                "range",
                [cgm.ClassicDescribedMember("m1", None, "c", "/h", b"\x01", b"\x02")],
            ),
            cgm.ClassicGroupDescription(0, "h", "Dead", "", ""),
        ]
    ),
    cgm.ClassicListGroupsResponse: cgm.ClassicListGroupsResponse(
        0, [cgm.ClassicListedGroup("g", "consumer", "Stable")]
    ),
}


def test_samples_cover_every_api_and_every_message_class() -> None:
    assert set(SAMPLE_REQUESTS) == {req for req, _ in m.REQUEST_TYPES.values()}
    assert set(SAMPLE_RESPONSES) == {resp for _, resp in m.REQUEST_TYPES.values()}
    all_classes = {
        obj
        for obj in vars(m).values()
        for module in (
            m,
            cm,
            gm,
            cgm,
            lem,
            ldm,
            ram,
            bam,
            rdm,
            pam,
            rvm,
            um,
            am,
            acls,
            sm,
            tm,
            fm,
            forwarding,
        )
        for obj in vars(module).values()
        if inspect.isclass(obj)
        and dataclasses.is_dataclass(obj)
        and obj.__module__ == module.__name__
    }
    reachable: set[type] = set()

    def visit(tp: Any) -> None:
        if dataclasses.is_dataclass(tp) and isinstance(tp, type):
            if tp in reachable:
                return
            reachable.add(tp)
            for hint in typing.get_type_hints(tp, include_extras=True).values():
                visit(hint)
        for arg in get_args(tp):
            visit(arg)

    for req, resp in m.REQUEST_TYPES.values():
        visit(req)
        visit(resp)
    assert all_classes == reachable


def test_api_numbers_are_stable() -> None:
    assert {k.name: int(k) for k in ApiKey} == {
        "PRODUCE": 0,
        "FETCH": 1,
        "LIST_OFFSETS": 2,
        "METADATA": 3,
        "OFFSET_COMMIT": 8,
        "OFFSET_FETCH": 9,
        "FIND_COORDINATOR": 10,
        "JOIN_GROUP": 11,
        "HEARTBEAT": 12,
        "LEAVE_GROUP": 13,
        "SYNC_GROUP": 14,
        "DESCRIBE_GROUPS": 15,
        "LIST_GROUPS": 16,
        "SASL_HANDSHAKE": 17,
        "API_VERSIONS": 18,
        "CREATE_TOPICS": 19,
        "DELETE_TOPICS": 20,
        "DELETE_RECORDS": 21,
        "INIT_PRODUCER_ID": 22,
        "OFFSET_FOR_LEADER_EPOCH": 23,
        "ADD_PARTITIONS_TO_TXN": 24,
        "ADD_OFFSETS_TO_TXN": 25,
        "END_TXN": 26,
        "WRITE_TXN_MARKERS": 27,
        "TXN_OFFSET_COMMIT": 28,
        "DESCRIBE_ACLS": 29,
        "CREATE_ACLS": 30,
        "DELETE_ACLS": 31,
        "SASL_AUTHENTICATE": 36,
        "CREATE_PARTITIONS": 37,
        "DELETE_GROUPS": 42,
        "ELECT_LEADERS": 43,
        "UNREGISTER_BROKER": 64,
        "ALTER_PARTITION_REASSIGNMENTS": 45,
        "LIST_PARTITION_REASSIGNMENTS": 46,
        "OFFSET_DELETE": 47,
        "INCREMENTAL_ALTER_CONFIGS": 44,
        "DESCRIBE_USER_SCRAM_CREDENTIALS": 50,
        "ALTER_USER_SCRAM_CREDENTIALS": 51,
        "ALTER_REPLICA_LOG_DIRS": 34,
        "DESCRIBE_LOG_DIRS": 35,
        "DESCRIBE_QUORUM": 55,
        "UPDATE_FEATURES": 57,
        "DESCRIBE_PRODUCERS": 61,
        "DESCRIBE_TRANSACTIONS": 65,
        "LIST_TRANSACTIONS": 66,
        "CONSUMER_GROUP_HEARTBEAT": 68,
        "ADD_RAFT_VOTER": 80,
        "REMOVE_RAFT_VOTER": 81,
        "BROKER_REGISTRATION": 1001,
        "BROKER_HEARTBEAT": 1002,
        "ALTER_PARTITION": 1003,
        "METADATA_FETCH": 1004,
        "ALLOCATE_PRODUCER_IDS": 1005,
        "NODE_AUTH_BEGIN": 1006,
        "NODE_AUTH_PROVE": 1007,
        "TXN_MARKERS_WRITTEN": 1008,
        "OBSERVE_RAFT": 1030,
        "ALTER_BROKER_CONFIGS": 1044,
        "CLASSIC_LEAVE_GROUP": 1013,
        "CLASSIC_DESCRIBE_GROUPS": 1015,
        "CLASSIC_LIST_GROUPS": 1016,
    }
    assert {req: api for api, (req, _) in m.REQUEST_TYPES.items()} == m.API_OF_REQUEST


# -- round trips ---------------------------------------------------------------------------------


def request_frame(cid: int, request: Any, client_id: str | None = None) -> Frame:
    return one_frame(join_parts(encode_request(cid, request, client_id)))


@pytest.mark.parametrize("request_type", list(SAMPLE_REQUESTS), ids=lambda t: t.__name__)
def test_sample_requests_round_trip(request_type: type) -> None:
    request = SAMPLE_REQUESTS[request_type]
    frame = request_frame(42, request, "cli-é")
    assert frame.header["version"] == PROTOCOL_VERSION
    header, body = decode_request(frame)
    assert header == RequestHeader(m.API_OF_REQUEST[request_type], PROTOCOL_VERSION, 42, "cli-é")
    assert type(body) is request_type
    assert body == request
    assert response_type_for(request) is m.REQUEST_TYPES[header.api][1]


@pytest.mark.parametrize("response_type", list(SAMPLE_RESPONSES), ids=lambda t: t.__name__)
def test_sample_responses_round_trip(response_type: type) -> None:
    response = SAMPLE_RESPONSES[response_type]
    frame = one_frame(join_parts(encode_response(-7, response)))
    assert response_correlation_id(frame) == -7
    assert frame.header["error_code"] == 0
    got = decode_response(frame, response_type)
    assert type(got) is response_type and got == response


@settings(max_examples=100, deadline=None)
@given(
    request=st.one_of([strategy_for(t) for t in SAMPLE_REQUESTS]),
    cid=st.integers(-(2**63), 2**63 - 1),
    client_id=st.one_of(st.none(), st.text(max_size=10)),
)
def test_generated_requests_round_trip(request: Any, cid: int, client_id: str | None) -> None:
    header, body = decode_request(request_frame(cid, request, client_id))
    assert header.correlation_id == cid and header.client_id == client_id
    assert header.api == m.API_OF_REQUEST[type(request)]
    assert body == request
    # Re-encoding the decoded body (blobs now memoryviews) gives the same bytes.
    assert join_parts(encode_request(cid, body, client_id)) == join_parts(
        encode_request(cid, request, client_id)
    )


@settings(max_examples=100, deadline=None)
@given(response=st.one_of([strategy_for(t) for t in SAMPLE_RESPONSES]), cid=st.integers(0, 2**31))
def test_generated_responses_round_trip(response: Any, cid: int) -> None:
    frame = one_frame(join_parts(encode_response(cid, response)))
    assert decode_response(frame, type(response)) == response


def test_blob_fields_travel_after_the_header_in_order() -> None:
    request = m.ProduceRequest(
        1, 100, [m.ProducePartitionData("t", p, bytes([p]) * (p + 1)) for p in range(3)]
    )
    parts = encode_request(1, request)
    assert [bytes(p) for p in parts[1:]] == [b"\x00", b"\x01\x01", b"\x02\x02\x02"]
    frame = one_frame(join_parts(parts))
    assert frame.header["blobs"] == [1, 2, 3]
    assert [p["records"] for p in frame.header["body"]["partitions"]] == [0, 1, 2]
    _, body = decode_request(frame)
    assert all(isinstance(p.records, memoryview) for p in body.partitions)


def test_file_region_blobs_are_passed_through() -> None:
    region = FileRegion(fd=3, position=100, length=len(BATCH))
    response = m.FetchResponse([m.FetchPartitionResponse("t", 0, 0, 1, 0, region)])
    parts = encode_response(5, response)
    assert parts[1] is region
    header = cbor2.loads(parts[0][4:])  # type: ignore[index]
    assert header["blobs"] == [len(BATCH)]
    # What the receiver sees once the driver has sent the region's bytes.
    frame = one_frame(bytes(parts[0]) + BATCH)  # type: ignore[arg-type]
    assert bytes(decode_response(frame, m.FetchResponse).partitions[0].records) == BATCH


def test_schema_to_wire_and_from_wire_directly() -> None:
    blobs: list[Any] = []
    wire = to_wire(SAMPLE_REQUESTS[m.ProduceRequest], blobs)
    assert wire["partitions"][1] == {"topic": "ü", "partition": 3, "records": 1}
    assert blobs == [BATCH, BATCH2]
    views = [memoryview(b) for b in blobs]
    assert from_wire(m.ProduceRequest, wire, views) == SAMPLE_REQUESTS[m.ProduceRequest]
    with pytest.raises(TypeError):
        to_wire({"not": "a dataclass"}, [])


# -- defaults and forward compatibility ----------------------------------------------------------


def decode_body(api: ApiKey, body: Any, blobs: list[bytes] | None = None) -> Any:
    header = {"api": int(api), "correlation_id": 9, "body": body}
    if blobs:
        header["blobs"] = [len(b) for b in blobs]
    return decode_request(one_frame(header_frame(header, b"".join(blobs or []))))[1]


def test_missing_fields_take_their_defaults() -> None:
    assert decode_body(ApiKey.METADATA, {}) == m.MetadataRequest(None)
    assert decode_body(ApiKey.API_VERSIONS, {}) == m.ApiVersionsRequest()
    fetch = decode_body(
        ApiKey.FETCH,
        {
            "max_wait_ms": 1,
            "min_bytes": 2,
            "max_bytes": 3,
            "partitions": [
                {"topic": "t", "partition": 0, "fetch_offset": 4, "partition_max_bytes": 5}
            ],
        },
    )
    assert fetch == m.FetchRequest(1, 2, 3, [m.FetchPartition("t", 0, 4, 5, -1, -1)], -1)
    create = decode_body(ApiKey.CREATE_TOPICS, {"topics": [{"name": "t", "num_partitions": 3}]})
    assert create == m.CreateTopicsRequest([m.NewTopic("t", 3, 1, {})], 30_000, False)
    assert decode_body(ApiKey.DELETE_TOPICS, {"topics": []}) == m.DeleteTopicsRequest([], 30_000)


def test_default_factories_are_not_shared() -> None:
    a = decode_body(ApiKey.CREATE_TOPICS, {"topics": [{"name": "a", "num_partitions": 1}]})
    b = decode_body(ApiKey.CREATE_TOPICS, {"topics": [{"name": "b", "num_partitions": 1}]})
    assert a.topics[0].configs == {} and a.topics[0].configs is not b.topics[0].configs


def test_response_defaults() -> None:
    body = {"partitions": [{"topic": "t", "partition": 0, "error_code": 3}]}
    frame = one_frame(header_frame({"correlation_id": 1, "error_code": 0, "body": body}))
    assert decode_response(frame, m.ProduceResponse) == m.ProduceResponse(
        [m.ProducePartitionResponse("t", 0, 3, -1, -1, -1, None)]
    )


def test_unknown_fields_are_ignored() -> None:
    body = {"topics": ["x"], "future_field": {"anything": [1, 2]}, 7: "non-text key"}
    assert decode_body(ApiKey.METADATA, body) == m.MetadataRequest(["x"])


def test_header_defaults() -> None:
    header, _ = decode_request(one_frame(header_frame({"api": 3, "correlation_id": 1, "body": {}})))
    assert header == RequestHeader(ApiKey.METADATA, 0, 1, None)
    frame = one_frame(
        header_frame({"api": 3, "correlation_id": 1, "version": 5, "client_id": "c", "body": {}})
    )
    assert decode_request(frame)[0] == RequestHeader(ApiKey.METADATA, 5, 1, "c")


# -- request header validation -------------------------------------------------------------------


def _raises_malformed(header: dict[str, Any], tail: bytes = b"") -> MalformedMessage:
    frame = one_frame(header_frame(header, tail))
    with pytest.raises(MalformedMessage) as info:
        decode_request(frame)
    return info.value


@pytest.mark.parametrize("cid", [None, "1", 1.5, True, False, [1], {"a": 1}, b"\x01"])
def test_correlation_id_must_be_an_int(cid: Any) -> None:
    exc = _raises_malformed({"api": 3, "correlation_id": cid, "body": {}})
    assert exc.correlation_id is None
    exc = _raises_malformed({"api": 3, "body": {}})
    assert exc.correlation_id is None


@pytest.mark.parametrize(
    "api",
    [4242, -1, 4, 999, 1099, 2**40, -(2**63), "0", "PRODUCE", None, 1.0, [0], {"a": 0}, b"\x00"],
)
def test_unknown_api_is_malformed_with_correlation_id(api: Any) -> None:
    exc = _raises_malformed({"api": api, "correlation_id": 11, "body": {}})
    assert exc.correlation_id == 11
    assert isinstance(exc.__cause__, UnknownApi) and exc.__cause__.api == api


def test_missing_api_is_malformed_with_correlation_id() -> None:
    assert _raises_malformed({"correlation_id": 12, "body": {}}).correlation_id == 12


@pytest.mark.parametrize(
    "api", [a for a in ApiKey if a not in m.REQUEST_TYPES], ids=lambda a: a.name
)
def test_known_but_unserved_apis_are_malformed(api: ApiKey) -> None:
    exc = _raises_malformed({"api": int(api), "correlation_id": 13, "body": {}})
    assert exc.correlation_id == 13 and api.name in str(exc)


@pytest.mark.parametrize(
    ("api", "version"),
    [(True, 0), (False, 0), (int(ApiKey.METADATA), True), (int(ApiKey.METADATA), False)],
    ids=["api-true-as-fetch", "api-false-as-produce", "version-true", "version-false"],
)
def test_bool_api_or_version_is_rejected(api: Any, version: Any) -> None:
    # Bodies that are valid for the api the bool would be taken as, so only the bool is wrong.
    bodies = {
        True: to_wire(SAMPLE_REQUESTS[m.FetchRequest], []),
        False: to_wire(m.ProduceRequest(1, 1, []), []),
    }
    body = bodies[api] if isinstance(api, bool) else {}
    header = {"api": api, "version": version, "correlation_id": 14, "body": body}
    assert _raises_malformed(header).correlation_id == 14


def test_bignum_api_is_malformed_not_a_crash() -> None:
    exc = _raises_malformed({"api": 10**5000, "correlation_id": 15, "body": {}})
    assert exc.correlation_id == 15


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("version", "0"),
        ("version", 1.5),
        ("version", None),
        ("version", [0]),
        ("client_id", 5),
        ("client_id", b"c"),
        ("client_id", ["c"]),
    ],
)
def test_bad_version_or_client_id(field: str, value: Any) -> None:
    header = {"api": 3, "correlation_id": 16, "body": {}, field: value}
    assert _raises_malformed(header).correlation_id == 16


@pytest.mark.parametrize("request_type", list(SAMPLE_REQUESTS), ids=lambda t: t.__name__)
@pytest.mark.parametrize("body", [None, [], "body", 1, b"body"], ids=repr)
def test_body_must_be_a_map(request_type: type, body: Any) -> None:
    api = int(m.API_OF_REQUEST[request_type])
    assert _raises_malformed({"api": api, "correlation_id": 17, "body": body}).correlation_id == 17
    assert _raises_malformed({"api": api, "correlation_id": 17}).correlation_id == 17


# -- body validation, generated from the message annotations -------------------------------------

Path = tuple[Any, ...]


def _unwrap(tp: Any) -> tuple[Any, bool]:
    if get_origin(tp) in (Union, types.UnionType):
        (inner,) = [a for a in get_args(tp) if a is not type(None)]
        return inner, True
    return tp, False


def _walk(tp: Any, value: Any, path: Path) -> Iterator[tuple[Path, Any, bool]]:
    """Every node of an encoded body: (path, its type without Optional, is it optional)."""
    inner, optional = _unwrap(tp)
    yield path, inner, optional
    if value is None:
        return
    if dataclasses.is_dataclass(inner):
        hints = typing.get_type_hints(inner, include_extras=True)
        for f in dataclasses.fields(inner):
            if f.name in value:
                yield from _walk(hints[f.name], value[f.name], (*path, f.name))
    elif get_origin(inner) is list:
        for i, item in enumerate(value):
            yield from _walk(get_args(inner)[0], item, (*path, i))
    elif get_origin(inner) is dict:
        for k, item in value.items():
            yield from _walk(get_args(inner)[1], item, (*path, k))


def _wrong_values(tp: Any, optional: bool, n_blobs: int) -> list[Any]:
    none = [] if optional else [None]
    if get_origin(tp) is Annotated:  # Blob: an index into the frame's blobs
        return [n_blobs, n_blobs + 5, -1, True, "0", 0.0, [0], *none]
    if tp is int:
        return ["1", True, False, 1.5, [1], {"a": 1}, b"\x01", *none]
    if tp is str:
        return [1, b"text", True, ["t"], {"t": 1}, *none]
    if tp is bool:
        return [1, 0, "true", [True], *none]
    if tp is bytes:
        return ["text", 1, True, [1], {"b": 1}, *none]
    if get_origin(tp) is list:
        return [{"a": 1}, "list", 1, b"", *none]
    if get_origin(tp) is dict:
        return [[["k", "v"]], "map", 1, {1: "v"}, {b"k": "v"}, *none]
    if dataclasses.is_dataclass(tp):
        return [[], "map", 1, b"", *none]
    if isinstance(tp, type) and issubclass(tp, enum.IntEnum):
        return ["1", True, 1.5, max(tp) + 100, -7, *none]
    raise AssertionError(f"no wrong values for {tp!r}")


def _set(root: dict[str, Any], path: Path, value: Any) -> None:
    node: Any = root
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value


def _body_cases(samples: dict[type, Any]) -> list[Any]:
    cases = []
    for cls, sample in samples.items():
        blobs: list[Any] = []
        wire = to_wire(sample, blobs)
        for path, tp, optional in _walk(cls, wire, ()):
            if not path:
                continue
            name = cls.__name__ + "." + ".".join(map(str, path))
            for i, bad in enumerate(_wrong_values(tp, optional, len(blobs))):
                cases.append(
                    pytest.param(cls, wire, blobs, path, bad, id=f"{name}={type(bad).__name__}{i}")
                )
    return cases


def _missing_cases(samples: dict[type, Any]) -> list[Any]:
    cases = []
    for cls, sample in samples.items():
        blobs: list[Any] = []
        wire = to_wire(sample, blobs)
        for path, tp, _ in _walk(cls, wire, ()):
            if not dataclasses.is_dataclass(tp):
                continue
            node: Any = wire
            for p in path:
                node = node[p]
            if node is None:  # an optional message left out: it has no fields to leave out
                continue
            for f in dataclasses.fields(tp):
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                    name = ".".join(map(str, (cls.__name__, *path, f.name)))
                    cases.append(pytest.param(cls, wire, blobs, (*path, f.name), id=name))
    return cases


@pytest.mark.parametrize(("cls", "wire", "blobs", "path", "bad"), _body_cases(SAMPLE_REQUESTS))
def test_request_field_with_wrong_type(
    cls: type, wire: Any, blobs: list[Any], path: Path, bad: Any
) -> None:
    body = copy.deepcopy(wire)
    _set(body, path, bad)
    header = {"api": int(m.API_OF_REQUEST[cls]), "correlation_id": 21, "body": body}
    if blobs:
        header["blobs"] = [len(b) for b in blobs]
    exc = _raises_malformed(header, b"".join(blobs))
    assert exc.correlation_id == 21
    assert str(path[-1]) in str(exc)  # the message names the bad field


@pytest.mark.parametrize(("cls", "wire", "blobs", "path"), _missing_cases(SAMPLE_REQUESTS))
def test_request_missing_required_field(cls: type, wire: Any, blobs: list[Any], path: Path) -> None:
    body = copy.deepcopy(wire)
    node: Any = body
    for p in path[:-1]:
        node = node[p]
    del node[path[-1]]
    header = {"api": int(m.API_OF_REQUEST[cls]), "correlation_id": 22, "body": body}
    if blobs:
        header["blobs"] = [len(b) for b in blobs]
    exc = _raises_malformed(header, b"".join(blobs))
    assert exc.correlation_id == 22 and repr(path[-1]) in str(exc)


def test_missing_field_cases_exist_for_nested_messages() -> None:
    ids = [p.id for p in _missing_cases(SAMPLE_REQUESTS)]
    assert "ProduceRequest.partitions.0.records" in ids
    assert "FetchRequest.partitions.0.fetch_offset" in ids


def test_error_message_names_the_path() -> None:
    wire = to_wire(SAMPLE_REQUESTS[m.ProduceRequest], [])
    wire["partitions"][1]["topic"] = 5
    header = {"api": 0, "correlation_id": 1, "body": wire, "blobs": [len(BATCH), len(BATCH2)]}
    exc = _raises_malformed(header, BATCH + BATCH2)
    assert "ProduceRequest.partitions[1].topic" in str(exc)


def _response_frame(cid: int, body: Any, blobs: list[Any]) -> Frame:
    header = {"correlation_id": cid, "error_code": 0, "body": body}
    if blobs:
        header["blobs"] = [len(b) for b in blobs]
    return one_frame(header_frame(header, b"".join(blobs)))


@pytest.mark.parametrize("response_type", list(SAMPLE_RESPONSES), ids=lambda t: t.__name__)
def test_response_fields_with_wrong_types_or_missing(response_type: type) -> None:
    # One test per response type (clients decode these; the request side is itemised above).
    cases = _body_cases({response_type: SAMPLE_RESPONSES[response_type]})
    for case in cases:
        cls, wire, blobs, path, bad = case.values
        body = copy.deepcopy(wire)
        _set(body, path, bad)
        with pytest.raises(MalformedMessage):
            decode_response(_response_frame(23, body, blobs), cls)
    missing = _missing_cases({response_type: SAMPLE_RESPONSES[response_type]})
    for case in missing:
        cls, wire, blobs, path = case.values
        body = copy.deepcopy(wire)
        node: Any = body
        for p in path[:-1]:
            node = node[p]
        del node[path[-1]]
        with pytest.raises(MalformedMessage, match=repr(path[-1])):
            decode_response(_response_frame(24, body, blobs), cls)
    assert cases and (missing or response_type is m.ApiVersionsResponse)


# -- responses: error path and correlation ids ----------------------------------------------------


@pytest.mark.parametrize(
    "code", [c for c in ErrorCode if c is not ErrorCode.NONE], ids=lambda c: c.name
)
def test_error_responses_round_trip(code: ErrorCode) -> None:
    frame = one_frame(join_parts(encode_error_response(31, code, f"because {code.name}")))
    assert frame.header["body"] is None
    got = decode_response(frame, m.FetchResponse)
    assert got == ErrorResponse(31, code, f"because {code.name}")
    assert type(got.error_code) is ErrorCode


def test_error_response_without_or_with_bad_message() -> None:
    frame = one_frame(join_parts(encode_error_response(1, ErrorCode.INVALID_REQUEST)))
    assert decode_response(frame, m.MetadataResponse) == ErrorResponse(
        1, ErrorCode.INVALID_REQUEST, None
    )
    frame = one_frame(header_frame({"correlation_id": 2, "error_code": 42, "error_message": 5}))
    assert decode_response(frame, m.MetadataResponse) == ErrorResponse(
        2, ErrorCode.INVALID_REQUEST, None
    )


@pytest.mark.parametrize("code", [12345, -2, 2**70, "6", None, True, 1.0])
def test_unknown_top_level_error_code_is_unknown_server_error(code: Any) -> None:
    frame = one_frame(header_frame({"correlation_id": 3, "error_code": code, "body": None}))
    assert decode_response(frame, m.MetadataResponse) == ErrorResponse(
        3, ErrorCode.UNKNOWN_SERVER_ERROR, None
    )


def test_missing_error_code_means_success() -> None:
    body = to_wire(SAMPLE_RESPONSES[m.DeleteTopicsResponse], [])
    frame = one_frame(header_frame({"correlation_id": 4, "body": body}))
    assert (
        decode_response(frame, m.DeleteTopicsResponse) == SAMPLE_RESPONSES[m.DeleteTopicsResponse]
    )


@pytest.mark.parametrize("cid", [None, "1", True, 1.5])
def test_response_correlation_id_must_be_an_int(cid: Any) -> None:
    header = {"error_code": 0, "body": {"topics": []}}
    if cid is not None:
        header["correlation_id"] = cid
    frame = one_frame(header_frame(header))
    with pytest.raises(MalformedMessage):
        response_correlation_id(frame)
    with pytest.raises(MalformedMessage):
        decode_response(frame, m.DeleteTopicsResponse)


def test_successful_response_with_bad_body() -> None:
    frame = one_frame(header_frame({"correlation_id": 5, "error_code": 0, "body": None}))
    with pytest.raises(MalformedMessage):
        decode_response(frame, m.FetchResponse)


# -- ErrorCode -----------------------------------------------------------------------------------

KAFKA_NUMBERS = {
    "UNKNOWN_SERVER_ERROR": -1,
    "NONE": 0,
    "OFFSET_OUT_OF_RANGE": 1,
    "CORRUPT_MESSAGE": 2,
    "UNKNOWN_TOPIC_OR_PARTITION": 3,
    "LEADER_NOT_AVAILABLE": 5,
    "NOT_LEADER_OR_FOLLOWER": 6,
    "REQUEST_TIMED_OUT": 7,
    "MESSAGE_TOO_LARGE": 10,
    "NETWORK_EXCEPTION": 13,
    "COORDINATOR_LOAD_IN_PROGRESS": 14,
    "COORDINATOR_NOT_AVAILABLE": 15,
    "NOT_COORDINATOR": 16,
    "INVALID_TOPIC": 17,
    "RECORD_LIST_TOO_LARGE": 18,
    "NOT_ENOUGH_REPLICAS": 19,
    "NOT_ENOUGH_REPLICAS_AFTER_APPEND": 20,
    "INVALID_REQUIRED_ACKS": 21,
    "ILLEGAL_GENERATION": 22,
    "INCONSISTENT_GROUP_PROTOCOL": 23,
    "INVALID_GROUP_ID": 24,
    "UNKNOWN_MEMBER_ID": 25,
    "INVALID_SESSION_TIMEOUT": 26,
    "REBALANCE_IN_PROGRESS": 27,
    "AUTHORIZATION_FAILED": 29,
    "GROUP_AUTHORIZATION_FAILED": 30,
    "CLUSTER_AUTHORIZATION_FAILED": 31,
    "SECURITY_DISABLED": 54,
    "INVALID_REPLICA_ASSIGNMENT": 39,
    "PREFERRED_LEADER_NOT_AVAILABLE": 80,
    "ELIGIBLE_LEADERS_NOT_AVAILABLE": 83,
    "ELECTION_NOT_NEEDED": 84,
    "NO_REASSIGNMENT_IN_PROGRESS": 85,
    "INVALID_VOTER_KEY": 125,
    "DUPLICATE_VOTER": 126,
    "VOTER_NOT_FOUND": 127,
    "BROKER_ID_NOT_REGISTERED": 102,
    "INVALID_TIMESTAMP": 32,
    "UNSUPPORTED_VERSION": 35,
    "TOPIC_ALREADY_EXISTS": 36,
    "INVALID_PARTITIONS": 37,
    "INVALID_REPLICATION_FACTOR": 38,
    "INVALID_CONFIG": 40,
    "NOT_CONTROLLER": 41,
    "INVALID_REQUEST": 42,
    "OUT_OF_ORDER_SEQUENCE": 45,
    "DUPLICATE_SEQUENCE": 46,
    "INVALID_PRODUCER_EPOCH": 47,
    "INVALID_TXN_STATE": 48,
    "INVALID_PRODUCER_ID_MAPPING": 49,
    "INVALID_TRANSACTION_TIMEOUT": 50,
    "CONCURRENT_TRANSACTIONS": 51,
    "TRANSACTION_COORDINATOR_FENCED": 52,
    "TRANSACTIONAL_ID_AUTHORIZATION_FAILED": 53,
    "PRODUCER_FENCED": 90,
    "TRANSACTIONAL_ID_NOT_FOUND": 105,
    "STORAGE_ERROR": 56,
    "LOG_DIR_NOT_FOUND": 57,
    "REPLICA_NOT_AVAILABLE": 9,
    "AUTHENTICATION_FAILED": 58,
    "UNKNOWN_PRODUCER_ID": 59,
    "GROUP_NOT_EMPTY": 68,
    "GROUP_ID_NOT_FOUND": 69,
    "MEMBER_ID_REQUIRED": 79,
    "GROUP_MAX_SIZE_REACHED": 81,
    "FENCED_INSTANCE_ID": 82,
    "FENCED_MEMBER_EPOCH": 110,
    "UNRELEASED_INSTANCE_ID": 111,
    "UNSUPPORTED_ASSIGNOR": 112,
    "OFFSET_NOT_AVAILABLE": 78,
    "FENCED_LEADER_EPOCH": 74,
    "UNKNOWN_LEADER_EPOCH": 75,
    "UNSUPPORTED_COMPRESSION_TYPE": 76,
    "INVALID_RECORD": 87,
    "UNSUPPORTED_SASL_MECHANISM": 33,
    "ILLEGAL_SASL_STATE": 34,
    "RESOURCE_NOT_FOUND": 91,
    "UNACCEPTABLE_CREDENTIAL": 93,
    "FETCH_SESSION_ID_NOT_FOUND": 70,
    "INVALID_FETCH_SESSION_EPOCH": 71,
    "GROUP_SUBSCRIBED_TO_TOPIC": 86,
    "UNKNOWN_API": 1000,
}


def test_error_code_numbers_are_stable_and_unique() -> None:
    assert {c.name: int(c) for c in ErrorCode} == KAFKA_NUMBERS
    assert len(ErrorCode.__members__) == len(set(KAFKA_NUMBERS.values()))  # no aliases


def test_kafka_numbers_are_rillets_but_for_rillet_only_codes() -> None:
    assert {c.name: to_kafka(c) for c in ErrorCode if to_kafka(c) != int(c)} == {"UNKNOWN_API": 35}
    assert all(-1 <= to_kafka(c) < 1000 for c in ErrorCode)


@pytest.mark.parametrize("code", list(ErrorCode), ids=lambda c: c.name)
def test_from_wire_known_codes(code: ErrorCode) -> None:
    assert ErrorCode.from_wire(int(code)) is code
    assert ErrorCode.from_wire(code) is code


@pytest.mark.parametrize(
    "value", [4, 8, 99, 999, 1001, -2, 2**63, -(2**70), pytest.param(10**5000, id="bignum")]
)
def test_from_wire_unknown_numbers(value: int) -> None:
    assert ErrorCode.from_wire(value) is ErrorCode.UNKNOWN_SERVER_ERROR


@pytest.mark.parametrize("value", [None, "0", "NONE", 0.0, 1.0, True, False, [0], b"\x00"])
def test_from_wire_non_integers(value: Any) -> None:
    assert ErrorCode.from_wire(value) is ErrorCode.UNKNOWN_SERVER_ERROR


def test_retriable_flags() -> None:
    retriable = {
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.NOT_ENOUGH_REPLICAS,
        ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        ErrorCode.FETCH_SESSION_ID_NOT_FOUND,
        ErrorCode.INVALID_FETCH_SESSION_EPOCH,
        ErrorCode.REQUEST_TIMED_OUT,
        ErrorCode.FENCED_LEADER_EPOCH,
        ErrorCode.UNKNOWN_LEADER_EPOCH,
        ErrorCode.REBALANCE_IN_PROGRESS,
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.LEADER_NOT_AVAILABLE,
        ErrorCode.NOT_CONTROLLER,
        ErrorCode.NETWORK_EXCEPTION,
        ErrorCode.CORRUPT_MESSAGE,
    }
    fatal = {
        ErrorCode.NONE,
        ErrorCode.INVALID_REQUEST,
        ErrorCode.MESSAGE_TOO_LARGE,
        ErrorCode.OFFSET_OUT_OF_RANGE,
        ErrorCode.AUTHENTICATION_FAILED,
        ErrorCode.AUTHORIZATION_FAILED,
        ErrorCode.ILLEGAL_GENERATION,
        ErrorCode.UNKNOWN_MEMBER_ID,
        ErrorCode.OUT_OF_ORDER_SEQUENCE,
        ErrorCode.TOPIC_ALREADY_EXISTS,
        ErrorCode.UNKNOWN_API,
        ErrorCode.UNSUPPORTED_VERSION,
        ErrorCode.INVALID_CONFIG,
    }
    assert all(c.retriable for c in retriable)
    assert not any(c.retriable for c in fatal)
    refresh = {c for c in ErrorCode if c.needs_metadata_refresh}
    assert {
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.NOT_COORDINATOR,
    } <= refresh
    assert all(c.retriable for c in refresh)  # refreshing only helps if retrying is allowed


def test_every_wire_error_is_a_wire_error() -> None:
    from rillet.wire import errors

    classes = [c for c in vars(errors).values() if inspect.isclass(c) and issubclass(c, Exception)]
    assert all(issubclass(c, WireError) for c in classes)
