"""Kafka's ACL decision: may this principal, from this host, do this operation on this
resource? Sans-I/O; the ACLs are passed in (the model is :mod:`rillet.wire.acls`).

The rules are Kafka's (its standard authorizer), so ACLs written for Kafka mean the same:

- a super user may do everything;
- an ACL matches a request when its resource does (a LITERAL name equal to the resource's
  or the wildcard ``*``; a PREFIXED name that starts the resource's), its principal does
  (equal, or ``User:*``) and its host does (equal, or ``*``);
- a matching DENY for the operation (or for ALL) wins over any ALLOW;
- otherwise a matching ALLOW for the operation (or for ALL) allows it; DESCRIBE is also
  allowed by an ALLOW for READ, WRITE, DELETE or ALTER, and DESCRIBE_CONFIGS by one for
  ALTER_CONFIGS (a DENY implies nothing);
- no matching ALLOW: denied (Kafka's default, ``allow.everyone.if.no.acl.found=false``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rillet.wire.acls import (
    WILDCARD_HOST,
    WILDCARD_PRINCIPAL,
    WILDCARD_RESOURCE,
    AclBinding,
    Operation,
    PatternType,
    Permission,
    ResourceType,
)

__all__ = [
    "WILDCARD_HOST",
    "WILDCARD_PRINCIPAL",
    "WILDCARD_RESOURCE",
    "AclBinding",
    "Authorizer",
    "AuthorizerConfig",
    "Operation",
    "PatternType",
    "Permission",
    "ResourceType",
]

# What an ALLOW for the key also allows.
_IMPLIED_BY: dict[Operation, frozenset[Operation]] = {
    Operation.DESCRIBE: frozenset(
        {Operation.READ, Operation.WRITE, Operation.DELETE, Operation.ALTER}
    ),
    Operation.DESCRIBE_CONFIGS: frozenset({Operation.ALTER_CONFIGS}),
}


@dataclass(frozen=True, slots=True)
class AuthorizerConfig:
    """``[authorizer]`` in node.toml (Kafka's ``authorizer.class.name`` and ``super.users``).

    Off by default: every client may do everything, as in a Kafka cluster without an
    authorizer. On, a request needs an ACL (or a super user); every node of a cluster must
    have the same setting.
    """

    enabled: bool = False
    # Principals allowed everything, semicolon-separated (a certificate's name has commas):
    # "User:admin;User:CN=ops,O=Example".
    super_users: str = ""

    def __post_init__(self) -> None:
        bad = [u for u in self.super_user_set if not u.startswith("User:") or u == "User:"]
        if bad:
            raise ValueError(f"authorizer.super_users: {', '.join(bad)} is not User:<name>")

    @property
    def super_user_set(self) -> frozenset[str]:
        return frozenset(u.strip() for u in self.super_users.split(";") if u.strip())


@dataclass(frozen=True, slots=True)
class Authorizer:
    super_users: frozenset[str] = frozenset()

    def authorize(
        self,
        acls: Iterable[AclBinding],
        principal: str,
        host: str,
        operation: Operation,
        resource_type: ResourceType,
        name: str,
    ) -> bool:
        if principal in self.super_users:
            return True
        allowing = {operation, Operation.ALL} | _IMPLIED_BY.get(operation, frozenset())
        allowed = False
        for acl in acls:
            if not acl.applies_to(principal, host, resource_type, name):
                continue
            if acl.permission == Permission.DENY:
                if acl.operation in (operation, Operation.ALL):
                    return False
            elif acl.operation in allowing:
                allowed = True
        return allowed
