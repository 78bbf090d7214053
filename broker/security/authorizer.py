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
