"""Kafka's ConsumerGroupHeartbeat rules (epochs, nulls meaning "unchanged", static ids, group
size, assignor names) over the group coordinator, without sockets."""

from __future__ import annotations

import time

from test_group_coordinator import GROUP, apply, cluster

from rillet.metadata_quorum.consumer_protocol import (
    GroupLimits,
    assignor_name,
    kafka_heartbeat,
)
from rillet.metadata_quorum.controller import Controller
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.group_coordinator import MemberHeartbeat
from rillet.metadata_quorum.state import MetadataState
from rillet.metadata_quorum.topic_patterns import matching
from rillet.wire import group_messages as gm
from rillet.wire.error_codes import ErrorCode

LIMITS = GroupLimits(session_timeout_ms=45_000, max_size=2)


def kafka_req(member_id: str, epoch: int, **kw: object) -> gm.ConsumerGroupHeartbeatRequest:
    fields: dict[str, object] = {
        "group_id": GROUP,
        "member_id": member_id,
        "session_timeout_ms": 0,
        "topics": ["t"],
        "member_epoch": epoch,
        "by_topic_id": True,
    }
    fields.update(kw)
    return gm.ConsumerGroupHeartbeatRequest(**fields)  # type: ignore[arg-type]


def send(ctl: Controller, state: MetadataState, req: gm.ConsumerGroupHeartbeatRequest) -> Decision:
    hb = kafka_heartbeat(state, req, LIMITS)
    if isinstance(hb, Decision):
        return hb
    return apply(state, ctl.groups.heartbeat(state, hb, 0))


def owned_by_id(state: MetadataState, member_id: str) -> list[gm.GroupTopicPartitions]:
    group = state.groups.groups[GROUP]
    m = group.members[member_id]
    parts = sorted(m.owned & group.target.get(member_id, frozenset()))
    return [gm.GroupTopicPartitions(parts[0][0], [p for _, p in parts])] if parts else []


def epoch_of(state: MetadataState, member_id: str) -> int:
    return state.groups.groups[GROUP].members[member_id].generation


def test_a_join_takes_the_default_session_and_kafka_s_uniform_assignor() -> None:
    _ctl, state, _ = cluster(6)
    hb = kafka_heartbeat(state, kafka_req("m1", 0, assignor="uniform", owned=[]), LIMITS)
    assert isinstance(hb, MemberHeartbeat)
    assert hb.joining and hb.session_timeout_ms == 45_000 and hb.assignor == "sticky"
    assert hb.owned == frozenset()
    assert assignor_name("range") == "range" and assignor_name(None) == ""
    refused = kafka_heartbeat(state, kafka_req("m1", 0, assignor="fancy"), LIMITS)
    assert isinstance(refused, Decision) and refused.error == ErrorCode.UNSUPPORTED_ASSIGNOR


def test_epochs_are_fenced_as_kafka_does() -> None:
    ctl, state, topic_id = cluster(6)
    assert send(ctl, state, kafka_req("m1", 0, owned=[])).error == ErrorCode.NONE
    epoch = epoch_of(state, "m1")
    owned = owned_by_id(state, "m1")
    assert send(ctl, state, kafka_req("m1", epoch, owned=owned)).error == ErrorCode.NONE
    assert send(ctl, state, kafka_req("m1", epoch + 5)).error == ErrorCode.FENCED_MEMBER_EPOCH
    assert send(ctl, state, kafka_req("ghost", 3)).error == ErrorCode.UNKNOWN_MEMBER_ID
    # A second member moves m1 to a newer epoch; m1's previous one still works while it
    # reports only partitions it owns, and is fenced when it claims others.
    assert send(ctl, state, kafka_req("m2", 0, owned=[])).error == ErrorCode.NONE
    send(ctl, state, kafka_req("m1", epoch_of(state, "m1"), owned=owned))
    kept = owned_by_id(state, "m1")  # what it keeps; it reports releasing the rest
    send(ctl, state, kafka_req("m1", epoch_of(state, "m1"), owned=kept))
    assert epoch_of(state, "m1") > epoch and len(kept[0].partitions) == 3
    assert send(ctl, state, kafka_req("m1", epoch, owned=None)).error == ErrorCode.NONE
    claim = [gm.GroupTopicPartitions(topic_id, list(range(6)))]
    stale = send(ctl, state, kafka_req("m1", epoch, owned=claim))
    assert stale.error == ErrorCode.FENCED_MEMBER_EPOCH


def test_null_fields_keep_what_the_member_last_sent() -> None:
    ctl, state, _ = cluster(6)
    send(ctl, state, kafka_req("m1", 0, topics=[], pattern="t.*", owned=[]))
    epoch = epoch_of(state, "m1")
    hb = kafka_heartbeat(
        state, kafka_req("m1", epoch, topics=[], keep_topics=True, keep_pattern=True), LIMITS
    )
    assert isinstance(hb, MemberHeartbeat)
    assert (hb.topics, hb.pattern, hb.owned, hb.joining) == ((), "t.*", None, False)
    changed = kafka_heartbeat(state, kafka_req("m1", epoch, keep_pattern=False), LIMITS)
    assert isinstance(changed, MemberHeartbeat) and changed.pattern is None


def test_group_size_and_unreleased_instance_ids_are_refused() -> None:
    ctl, state, _ = cluster(6)
    send(ctl, state, kafka_req("m1", 0, instance_id="i1", owned=[]))
    taken = send(ctl, state, kafka_req("m2", 0, instance_id="i1", owned=[]))
    assert taken.error == ErrorCode.UNRELEASED_INSTANCE_ID
    assert send(ctl, state, kafka_req("m2", 0, owned=[])).error == ErrorCode.NONE
    full = send(ctl, state, kafka_req("m3", 0, owned=[]))
    assert full.error == ErrorCode.GROUP_MAX_SIZE_REACHED
    # Once i1's holder left, the instance id is free again.
    apply(state, ctl.groups.leave(state, GROUP, "m1"))
    again = send(ctl, state, kafka_req("m4", 0, instance_id="i1", owned=[]))
    assert again.error == ErrorCode.NONE


def test_a_pattern_is_matched_in_linear_time_and_re2_syntax_is_checked() -> None:
    """``(a+)+`` against a long run of a's stalls a backtracking engine (seconds at 27
    characters, doubling with each one): one heartbeat would have stalled the controller."""
    ctl, state, _ = cluster(2)
    apply(state, ctl.create_topic(state, "a" * 27 + "-x", 1, 1, {}))
    started = time.monotonic()
    joined = send(ctl, state, kafka_req("m1", 0, topics=[], pattern="(a+)+", owned=[]))
    assert joined.error == ErrorCode.NONE
    assert time.monotonic() - started < 1.0
    refused = send(ctl, state, kafka_req("m2", 0, topics=[], pattern=r"(t)\1", owned=[]))
    assert refused.error == ErrorCode.INVALID_REQUEST and "bad pattern" in str(refused.message)
    assert matching(r"(t)\1", {"tt": "id"}) == set()  # recorded before RE2: matches nothing
    assert matching("t.*", {"t": "1", "at": "2"}) == {"1"}  # the whole name
