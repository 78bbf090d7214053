"""The ACLs in the metadata log: records applied and undone, filters (ANY, MATCH, LITERAL,
PREFIXED) as DescribeAcls and DeleteAcls use them, the snapshot round trip, and the
controller's decision (idempotent adds and removes)."""

from __future__ import annotations

import random

from rillet.metadata_quorum.acl_registry import AclCreated, AclRegistry, AclRemoved
from rillet.metadata_quorum.controller import Controller, ControllerConfig
from rillet.metadata_quorum.records import decode_entry, encode_entry
from rillet.metadata_quorum.state import MetadataState
from rillet.wire.acls import AclBinding, AclFilter, Operation, PatternType, Permission, ResourceType

T, G = ResourceType.TOPIC, ResourceType.GROUP
LIT, PRE = PatternType.LITERAL, PatternType.PREFIXED


def b(
    rtype: ResourceType, name: str, pattern: PatternType = LIT, who: str = "User:a"
) -> AclBinding:
    return AclBinding(rtype, name, pattern, who, "*", Operation.READ, Permission.ALLOW)


BINDINGS = [
    b(T, "orders"),
    b(T, "ord", PRE),
    b(T, "*"),
    b(G, "orders"),
    b(T, "audit", who="User:b"),
]


def registry() -> AclRegistry:
    r = AclRegistry()
    for binding in BINDINGS:
        r.apply(AclCreated(binding))
    return r


def test_filters_select_like_kafkas() -> None:
    r = registry()
    assert sorted(r.selected(AclFilter()), key=str) == sorted(BINDINGS, key=str)
    assert r.selected(AclFilter(T, "orders", LIT)) == [b(T, "orders")]
    assert r.selected(AclFilter(T, "orders", PatternType.MATCH)) == [
        b(T, "orders"),
        b(T, "ord", PRE),
        b(T, "*"),
    ]
    assert r.selected(AclFilter(ResourceType.ANY, "orders")) == [b(T, "orders"), b(G, "orders")]
    assert r.selected(AclFilter(principal="User:b")) == [b(T, "audit", who="User:b")]
    assert r.selected(AclFilter(operation=Operation.WRITE)) == []


def test_records_apply_and_survive_the_log_and_a_snapshot() -> None:
    r = registry()
    r.apply(AclRemoved(b(T, "*")))
    r.apply(AclRemoved(b(T, "never-there")))
    assert len(r) == 4 and b(T, "*") not in r
    assert AclRegistry.from_doc(r.to_doc()).selected(AclFilter()) == r.selected(AclFilter())
    records = decode_entry(encode_entry([AclCreated(b(T, "x")), AclRemoved(b(T, "y"))]))
    assert records == [AclCreated(b(T, "x")), AclRemoved(b(T, "y"))]
    state = MetadataState()
    state.apply(1, AclCreated(b(T, "x")))
    again = MetadataState.from_snapshot(state.to_snapshot())
    assert again.acls.selected(AclFilter()) == [b(T, "x")]


def test_the_controller_adds_and_removes_only_what_changes() -> None:
    controller = Controller(ControllerConfig(), random.Random(1))
    state = MetadataState()
    first = controller.alter_acls(state, [b(T, "x"), b(T, "x")], [b(T, "y")])
    assert first.records == [AclCreated(b(T, "x"))]  # once; removing the absent: nothing
    state.apply(1, first.records[0])
    assert controller.alter_acls(state, [b(T, "x")], []).records == []
    assert controller.alter_acls(state, [], [b(T, "x")]).records == [AclRemoved(b(T, "x"))]
