"""Classic members in a consumer-protocol group (KIP-848's mixed groups), over the group
coordinator without sockets; the ConsumerProtocol bytes against kafka-python's classes."""

from __future__ import annotations

import warnings

from test_consumer_protocol import kafka_req, owned_by_id, send
from test_group_coordinator import GROUP, apply, cluster

from rillet.metadata_quorum import classic_members as cm
from rillet.metadata_quorum.classic_subscriptions import decode_subscription, encode_assignment
from rillet.metadata_quorum.controller import Controller
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.group_registry import MemberState
from rillet.metadata_quorum.state import MetadataState
from rillet.wire import classic_group_messages as cgm
from rillet.wire.error_codes import ErrorCode


def subscription(version: int, topics: list[str], owned: dict[str, list[int]]) -> bytes:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription as S

        s = S(
            version=version,
            topics=topics,
            user_data=b"u",
            owned_partitions=[S.TopicPartition(topic=t, partitions=p) for t, p in owned.items()],
            generation_id=3,
            rack_id=None,
        )
        return bytes(s.encode(version=version))


def test_subscriptions_and_assignments_read_and_write_kafka_s_bytes() -> None:
    got = decode_subscription(subscription(3, ["t", "u"], {"t": [1, 2]}))
    assert got is not None and (got.topics, got.owned) == (["t", "u"], [("t", [1, 2])])
    old = decode_subscription(subscription(0, ["t"], {}))
    assert old is not None and (old.topics, old.owned) == (["t"], [])
    assert decode_subscription(b"\x00") is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

        decoded = ConsumerProtocolAssignment.decode(encode_assignment([("t", [0, 4])]), version=0)
    assert [(tp.topic, list(tp.partitions)) for tp in decoded.assigned_partitions] == [
        ("t", [0, 4])
    ]


def join(
    ctl: Controller, state: MetadataState, member_id: str, owned: dict[str, list[int]]
) -> Decision:
    req = cgm.ClassicJoinGroupRequest(
        GROUP,
        10_000,
        30_000,
        member_id,
        None,
        "consumer",
        [cgm.ClassicProtocol("cooperative-sticky", subscription(3, ["t"], owned))],
        "classic-client",
        "/10.0.0.2",
    )
    hb = cm.join_heartbeat(state, req, member_id)
    if isinstance(hb, Decision):
        return hb
    return apply(state, ctl.groups.heartbeat(state, hb, 0))


def member(state: MetadataState, member_id: str) -> MemberState:
    return state.groups.groups[GROUP].members[member_id]


def assigned(state: MetadataState, member_id: str) -> list[int]:
    data = cm.assignment_bytes(state, GROUP, member(state, member_id))
    return [p for _, partitions in decode_assignment(data) for p in partitions]


def decode_assignment(data: bytes) -> list[tuple[str, list[int]]]:
    # An Assignment has a Subscription's layout up to the topic list: reuse the oracle.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

        a = ConsumerProtocolAssignment.decode(data, version=0)
    return [(tp.topic, list(tp.partitions)) for tp in a.assigned_partitions]


def test_a_classic_member_gets_its_share_once_the_other_member_released_it() -> None:
    ctl, state, _ = cluster(6)
    send(ctl, state, kafka_req("m1", 0, owned=[]))
    assert cm.held_by_consumer_members(state, GROUP)
    assert join(ctl, state, "c1", {}).error == ErrorCode.NONE
    c1 = member(state, "c1")
    assert c1.member.classic_protocol == "cooperative-sticky"
    # m1 still owns everything: c1 is told nothing yet and must join again.
    assert assigned(state, "c1") == [] and cm.must_rejoin(state, GROUP, c1)
    m1_epoch = member(state, "m1").generation
    send(ctl, state, kafka_req("m1", m1_epoch, owned=owned_by_id(state, "m1")))
    send(
        ctl, state, kafka_req("m1", member(state, "m1").generation, owned=owned_by_id(state, "m1"))
    )
    assert join(ctl, state, "c1", {}).error == ErrorCode.NONE
    c1 = member(state, "c1")
    assert len(assigned(state, "c1")) == 3 and not cm.must_rejoin(state, GROUP, c1)
    assert cm.classic_member(state, GROUP, "c1", c1.generation) == c1
    assert cm.classic_member(state, GROUP, "c1", c1.generation - 1) == ErrorCode.ILLEGAL_GENERATION
    assert cm.classic_member(state, GROUP, "zz", 1) == ErrorCode.UNKNOWN_MEMBER_ID


def test_only_consumers_with_a_readable_subscription_join() -> None:
    ctl, state, _ = cluster(2)
    send(ctl, state, kafka_req("m1", 0, owned=[]))
    req = cgm.ClassicJoinGroupRequest(
        GROUP, 10_000, 30_000, "c1", None, "connect", [cgm.ClassicProtocol("x", b"")]
    )
    refused = cm.join_heartbeat(state, req, "c1")
    assert isinstance(refused, Decision)
    assert refused.error == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    short = cgm.ClassicJoinGroupRequest(
        GROUP, 10, 30_000, "c1", None, "consumer", [cgm.ClassicProtocol("range", b"")]
    )
    too_short = cm.join_heartbeat(state, short, "c1")
    assert isinstance(too_short, Decision)
    assert too_short.error == ErrorCode.INVALID_SESSION_TIMEOUT
