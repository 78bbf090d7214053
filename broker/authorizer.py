"""Kafka's ACL model and the decision it implies: may this principal, from this host, do
this operation on this resource? Sans-I/O; the ACLs are passed in.

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

Numbers are Kafka's wire values (CreateAcls, DescribeAcls), so a binding crosses the Kafka
listener unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum

WILDCARD_RESOURCE = "*"
WILDCARD_PRINCIPAL = "User:*"
WILDCARD_HOST = "*"


class ResourceType(IntEnum):
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5


class PatternType(IntEnum):
    LITERAL = 3
    PREFIXED = 4


class Operation(IntEnum):
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12


class Permission(IntEnum):
    DENY = 2
    ALLOW = 3


# What an ALLOW for the key also allows.
_IMPLIED_BY: dict[Operation, frozenset[Operation]] = {
    Operation.DESCRIBE: frozenset(
        {Operation.READ, Operation.WRITE, Operation.DELETE, Operation.ALTER}
    ),
    Operation.DESCRIBE_CONFIGS: frozenset({Operation.ALTER_CONFIGS}),
}


@dataclass(frozen=True, slots=True)
class AclBinding:
    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str  # User:<name>, or User:* for everyone
    host: str  # an address, or * for any
    operation: Operation
    permission: Permission

    def matches(self, principal: str, host: str, resource_type: ResourceType, name: str) -> bool:
        if self.resource_type != resource_type:
            return False
        if self.principal not in (principal, WILDCARD_PRINCIPAL):
            return False
        if self.host not in (host, WILDCARD_HOST):
            return False
        if self.pattern_type == PatternType.PREFIXED:
            return name.startswith(self.resource_name)
        return self.resource_name in (name, WILDCARD_RESOURCE)


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
            if not acl.matches(principal, host, resource_type, name):
                continue
            if acl.permission == Permission.DENY:
                if acl.operation in (operation, Operation.ALL):
                    return False
            elif acl.operation in allowing:
                allowed = True
        return allowed
