"""Kafka's ACL model: bindings (who may do what to which resource) and the filters that
select them (DescribeAcls, DeleteAcls).

Numbers are Kafka's wire values, so a binding crosses the Kafka listener unchanged and
ACLs written for Kafka mean the same here. A filter's ``ANY`` matches every value of its
field; a pattern filter's ``MATCH`` selects the bindings that would apply to a resource of
that name (literal equal or ``*``, and prefixed ones the name starts with).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

WILDCARD_RESOURCE = "*"
WILDCARD_PRINCIPAL = "User:*"
WILDCARD_HOST = "*"


class ResourceType(IntEnum):
    ANY = 1  # filters only
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5


class PatternType(IntEnum):
    ANY = 1  # filters only
    MATCH = 2  # filters only
    LITERAL = 3
    PREFIXED = 4


class Operation(IntEnum):
    ANY = 1  # filters only
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
    ANY = 1  # filters only
    DENY = 2
    ALLOW = 3


CLUSTER_NAME = "kafka-cluster"  # the one CLUSTER resource's name, as Kafka spells it


@dataclass(frozen=True, slots=True)
class AclBinding:
    """One ACL: ``principal`` (``User:<name>`` or ``User:*``) from ``host`` (an address or
    ``*``) is allowed or denied ``operation`` on resources matching ``resource_name``."""

    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: Operation
    permission: Permission

    def invalid_reason(self) -> str | None:
        """Why this binding cannot be stored (filter-only values, empty names), or None."""
        if self.resource_type == ResourceType.ANY:
            return f"resource type {self.resource_type} is not a resource"
        if self.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
            return "pattern type must be LITERAL or PREFIXED"
        if self.operation == Operation.ANY:
            return f"operation {self.operation} is not an operation"
        if self.permission not in (Permission.ALLOW, Permission.DENY):
            return "permission must be ALLOW or DENY"
        if not self.resource_name:
            return "resource name is empty"
        if self.resource_type == ResourceType.CLUSTER and self.resource_name != CLUSTER_NAME:
            return f"the cluster resource is named {CLUSTER_NAME}"
        if not self.principal.startswith("User:") or len(self.principal) == len("User:"):
            return f"principal {self.principal!r} is not User:<name>"
        if not self.host:
            return "host is empty (use * for any)"
        return None

    def applies_to(self, principal: str, host: str, resource_type: int, name: str) -> bool:
        """Does this ACL speak about this request (whatever it allows or denies)?"""
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
class AclFilter:
    """Selects bindings; None in a name field and ANY in an enum field match everything."""

    resource_type: ResourceType = ResourceType.ANY
    resource_name: str | None = None
    pattern_type: PatternType = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: Operation = Operation.ANY
    permission: Permission = Permission.ANY

    def selects(self, b: AclBinding) -> bool:
        if self.resource_type not in (ResourceType.ANY, b.resource_type):
            return False
        if not self._selects_name(b):
            return False
        if self.principal is not None and b.principal != self.principal:
            return False
        if self.host is not None and b.host != self.host:
            return False
        if self.operation not in (Operation.ANY, b.operation):
            return False
        return self.permission in (Permission.ANY, b.permission)

    def _selects_name(self, b: AclBinding) -> bool:
        name = self.resource_name
        if self.pattern_type == PatternType.MATCH:
            if name is None:
                return True
            if b.pattern_type == PatternType.PREFIXED:
                return name.startswith(b.resource_name)
            return b.resource_name in (name, WILDCARD_RESOURCE)
        if self.pattern_type not in (PatternType.ANY, b.pattern_type):
            return False
        return name is None or b.resource_name == name
