"""The cluster's ACLs, as the metadata log holds them: one record per binding added or
removed, so every node's authorizer decides on the same set at the same log offset.

Kept per resource type, in insertion order, because every check asks about one type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rillet.wire.acls import (
    AclBinding,
    AclFilter,
    Operation,
    PatternType,
    Permission,
    ResourceType,
)


@dataclass(frozen=True, slots=True)
class AclCreated:
    """A metadata record: ``binding`` holds from now on."""

    binding: AclBinding


@dataclass(frozen=True, slots=True)
class AclRemoved:
    """A metadata record: ``binding`` no longer holds."""

    binding: AclBinding


@dataclass(slots=True)
class AclRegistry:
    by_type: dict[ResourceType, dict[AclBinding, None]] = field(default_factory=dict)
    # Bumped by every change: lets readers cache decisions made on a given set of ACLs.
    version: int = 0

    def apply(self, record: AclCreated | AclRemoved) -> None:
        self.version += 1
        b = record.binding
        if isinstance(record, AclCreated):
            self.by_type.setdefault(b.resource_type, {})[b] = None
        else:
            self.by_type.get(b.resource_type, {}).pop(b, None)

    def of_type(self, resource_type: ResourceType) -> list[AclBinding]:
        return list(self.by_type.get(resource_type, {}))

    def __contains__(self, binding: AclBinding) -> bool:
        return binding in self.by_type.get(binding.resource_type, {})

    def __len__(self) -> int:
        return sum(len(v) for v in self.by_type.values())

    def selected(self, acl_filter: AclFilter) -> list[AclBinding]:
        return [b for bindings in self.by_type.values() for b in bindings if acl_filter.selects(b)]

    def to_doc(self) -> list[list[Any]]:
        return [
            [
                int(b.resource_type),
                b.resource_name,
                int(b.pattern_type),
                b.principal,
                b.host,
                int(b.operation),
                int(b.permission),
            ]
            for bindings in self.by_type.values()
            for b in bindings
        ]

    @classmethod
    def from_doc(cls, doc: Any) -> AclRegistry:
        registry = cls()
        for rtype, name, pattern, principal, host, operation, permission in doc:
            binding = AclBinding(
                ResourceType(rtype),
                str(name),
                PatternType(pattern),
                str(principal),
                str(host),
                Operation(operation),
                Permission(permission),
            )
            registry.apply(AclCreated(binding))
        return registry
