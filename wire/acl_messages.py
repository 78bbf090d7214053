"""ACLs: create, describe and delete them (Kafka's apis 30, 29 and 31).

Creations and deletions change the metadata log, so a node that is not the controller
forwards them (``forwarded``: it was, so it is not forwarded again). Describe is answered
from the node's own metadata view.
"""

from __future__ import annotations

from dataclasses import dataclass

from rillet.wire.acls import AclBinding, AclFilter
from rillet.wire.forwarding import ForwardedFor
from rillet.wire.request import Request


@dataclass(frozen=True, slots=True)
class CreateAclsRequest(Request["CreateAclsResponse"]):
    creations: list[AclBinding]
    forwarded: bool = False
    forwarded_for: ForwardedFor | None = None  # set by the node that forwards it


@dataclass(frozen=True, slots=True)
class AclOutcome:
    error_code: int
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class CreateAclsResponse:
    """One outcome per creation, in order."""

    results: list[AclOutcome]


@dataclass(frozen=True, slots=True)
class DescribeAclsRequest(Request["DescribeAclsResponse"]):
    filter: AclFilter


@dataclass(frozen=True, slots=True)
class DescribeAclsResponse:
    error_code: int
    error_message: str | None
    bindings: list[AclBinding]


@dataclass(frozen=True, slots=True)
class DeleteAclsRequest(Request["DeleteAclsResponse"]):
    filters: list[AclFilter]
    forwarded: bool = False
    forwarded_for: ForwardedFor | None = None  # set by the node that forwards it


@dataclass(frozen=True, slots=True)
class DeletedAcls:
    """What one filter removed (or why it could not)."""

    error_code: int
    error_message: str | None
    bindings: list[AclBinding]


@dataclass(frozen=True, slots=True)
class DeleteAclsResponse:
    """One result per filter, in order."""

    results: list[DeletedAcls]
