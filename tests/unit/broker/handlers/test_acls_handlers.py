"""ACL administration (handlers/acls.py): created and deleted by the controller (forwarded
there once by another node), described from any node's committed state; SECURITY_DISABLED
without an authorizer, NOT_CONTROLLER when no controller can be reached."""

from __future__ import annotations

from pathlib import Path

import trio
import trio.testing
from broker_context import NODE_ID, middle
from voter_context import answer, voter

from rillet.broker.config import NodeConfig
from rillet.broker.config.authorizer_config import AuthorizerConfig
from rillet.broker.handlers.acls import (
    handle_create_acls,
    handle_delete_acls,
    handle_describe_acls,
)
from rillet.wire.acl_messages import CreateAclsRequest, DeleteAclsRequest, DescribeAclsRequest
from rillet.wire.acls import AclBinding, AclFilter, Operation, PatternType, Permission, ResourceType
from rillet.wire.error_codes import ErrorCode


def binding(topic: str, principal: str = "User:alice") -> AclBinding:
    return AclBinding(
        ResourceType.TOPIC, topic, PatternType.LITERAL, principal, "*", Operation.READ,
        Permission.ALLOW,
    )  # fmt: skip


def with_authorizer(data_dir: Path) -> NodeConfig:
    return NodeConfig(node_id=NODE_ID, data_dir=data_dir, authorizer=AuthorizerConfig(True))


async def test_acls_are_created_described_and_deleted_on_the_controller(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path, with_authorizer(tmp_path)) as v:
        bad = binding("orders", principal="alice")  # not User:<name>
        created = await answer(
            handle_create_acls(v.ctx, CreateAclsRequest([binding("orders"), bad, binding("x")]))
        )
        assert [r.error_code for r in created.results] == [
            ErrorCode.NONE,
            ErrorCode.INVALID_REQUEST,
            ErrorCode.NONE,
        ]
        assert "User:<name>" in (created.results[1].error_message or "")
        every = handle_describe_acls(v.ctx, DescribeAclsRequest(AclFilter()))
        assert every.error_code == ErrorCode.NONE
        assert sorted(b.resource_name for b in every.bindings) == ["orders", "x"]
        orders = AclFilter(ResourceType.TOPIC, "orders")
        assert handle_describe_acls(v.ctx, DescribeAclsRequest(orders)).bindings == [
            binding("orders")
        ]
        deleted = await answer(
            handle_delete_acls(v.ctx, DeleteAclsRequest([orders, AclFilter(principal="User:bob")]))
        )
        assert [(d.error_code, d.bindings) for d in deleted.results] == [
            (ErrorCode.NONE, [binding("orders")]),
            (ErrorCode.NONE, []),
        ]
        left = handle_describe_acls(v.ctx, DescribeAclsRequest(AclFilter())).bindings
        assert left == [binding("x")]


async def test_another_node_forwards_a_change_once_and_answers_not_controller_without_one(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path, with_authorizer(tmp_path)) as v:
        broker = await v.broker_only(tmp_path / "broker")
        created = await answer(handle_create_acls(broker, CreateAclsRequest([binding("t")])))
        assert [r.error_code for r in created.results] == [ErrorCode.NONE]
        link = broker.metadata.link
        assert [type(c) for c in link.calls] == [CreateAclsRequest]  # type: ignore[union-attr]
        assert link.calls[0].forwarded  # type: ignore[union-attr]
        assert list(v.state.acls.selected(AclFilter())) == [binding("t")]
        all_invalid = await answer(
            handle_create_acls(broker, CreateAclsRequest([binding("t", "nobody")]))
        )
        assert [r.error_code for r in all_invalid.results] == [ErrorCode.INVALID_REQUEST]
        assert len(link.calls) == 1  # type: ignore[union-attr]  # refused without a hop
        deleted = await answer(handle_delete_acls(broker, DeleteAclsRequest([AclFilter()])))
        assert [d.bindings for d in deleted.results] == [[binding("t")]]
    unlinked = middle(tmp_path / "alone", with_authorizer(tmp_path / "alone")).ctx
    created = await answer(handle_create_acls(unlinked, CreateAclsRequest([binding("t")])))
    assert [r.error_code for r in created.results] == [ErrorCode.NOT_CONTROLLER]
    deleted = await answer(handle_delete_acls(unlinked, DeleteAclsRequest([AclFilter()])))
    assert [r.error_code for r in deleted.results] == [ErrorCode.NOT_CONTROLLER]


async def test_without_an_authorizer_every_acl_api_is_security_disabled(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        created = await answer(handle_create_acls(v.ctx, CreateAclsRequest([binding("t")] * 2)))
        assert [r.error_code for r in created.results] == [ErrorCode.SECURITY_DISABLED] * 2
        deleted = await answer(handle_delete_acls(v.ctx, DeleteAclsRequest([AclFilter()])))
        assert [r.error_code for r in deleted.results] == [ErrorCode.SECURITY_DISABLED]
        described = handle_describe_acls(v.ctx, DescribeAclsRequest(AclFilter()))
        assert (described.error_code, described.bindings) == (ErrorCode.SECURITY_DISABLED, [])
        assert len(v.state.acls.selected(AclFilter())) == 0
