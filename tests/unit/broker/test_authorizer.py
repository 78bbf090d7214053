"""Kafka's ACL rules, decided without I/O: matching by literal, wildcard and prefixed names,
principals and hosts; DENY over ALLOW; the operations an ALLOW implies; super users; and
no ACL meaning no access."""

from __future__ import annotations

import pytest

from rillet.broker.security.authorizer import (
    AclBinding,
    Authorizer,
    Operation,
    PatternType,
    Permission,
    ResourceType,
)

TOPIC, GROUP = ResourceType.TOPIC, ResourceType.GROUP
LITERAL, PREFIXED = PatternType.LITERAL, PatternType.PREFIXED
ALLOW, DENY = Permission.ALLOW, Permission.DENY


def acl(
    name: str,
    operation: Operation,
    permission: Permission = ALLOW,
    principal: str = "User:alice",
    host: str = "*",
    pattern: PatternType = LITERAL,
    resource: ResourceType = TOPIC,
) -> AclBinding:
    return AclBinding(resource, name, pattern, principal, host, operation, permission)


def allowed(acls: list[AclBinding], operation: Operation, name: str = "orders", **kw: str) -> bool:
    principal = kw.get("principal", "User:alice")
    host = kw.get("host", "10.0.0.1")
    return Authorizer(frozenset({"User:admin"})).authorize(
        acls, principal, host, operation, TOPIC, name
    )


def test_no_acl_means_no_access_except_for_super_users() -> None:
    assert not allowed([], Operation.READ)
    assert allowed([], Operation.DELETE, principal="User:admin")


@pytest.mark.parametrize(
    ("binding", "name", "expected"),
    [
        (acl("orders", Operation.READ), "orders", True),
        (acl("orders", Operation.READ), "orders-eu", False),
        (acl("*", Operation.READ), "anything", True),
        (acl("ord", Operation.READ, pattern=PREFIXED), "orders", True),
        (acl("ord", Operation.READ, pattern=PREFIXED), "audit", False),
        (acl("orders", Operation.READ, principal="User:*"), "orders", True),
        (acl("orders", Operation.READ, principal="User:bob"), "orders", False),
        (acl("orders", Operation.READ, host="10.0.0.1"), "orders", True),
        (acl("orders", Operation.READ, host="10.0.0.2"), "orders", False),
        (acl("orders", Operation.READ, resource=GROUP), "orders", False),
    ],
)
def test_what_an_acl_matches(binding: AclBinding, name: str, expected: bool) -> None:
    assert allowed([binding], Operation.READ, name) is expected


def test_deny_wins_and_all_covers_every_operation() -> None:
    assert not allowed(
        [acl("orders", Operation.ALL), acl("orders", Operation.READ, DENY)], Operation.READ
    )
    assert allowed(
        [acl("orders", Operation.ALL), acl("orders", Operation.READ, DENY)], Operation.WRITE
    )
    assert not allowed(
        [acl("*", Operation.ALL, DENY), acl("orders", Operation.WRITE)], Operation.WRITE
    )


def test_implied_operations() -> None:
    for operation in (Operation.READ, Operation.WRITE, Operation.DELETE, Operation.ALTER):
        assert allowed([acl("orders", operation)], Operation.DESCRIBE)
    assert allowed([acl("orders", Operation.ALTER_CONFIGS)], Operation.DESCRIBE_CONFIGS)
    assert not allowed([acl("orders", Operation.DESCRIBE)], Operation.READ)
    # A DENY implies nothing: denying READ leaves DESCRIBE to the ALLOWs.
    denied_read = [acl("orders", Operation.READ, DENY), acl("orders", Operation.WRITE)]
    assert allowed(denied_read, Operation.DESCRIBE)
