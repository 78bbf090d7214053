"""ACLs from the client: create, list and delete them (Kafka's CreateAcls, DescribeAcls and
DeleteAcls).

Creations and deletions go to the controller (see :mod:`controller_changes`): a resent
creation of an ACL that exists, or deletion of one that is gone, changes nothing more.
Deleting answers with what each filter removed; listing is answered by any node.
"""

from __future__ import annotations

from collections.abc import Sequence

from rillet.client.cluster import ClusterClient
from rillet.client.controller_changes import ToController, decided
from rillet.client.errors import BrokerError, error_for
from rillet.wire.acl_messages import (
    AclOutcome,
    CreateAclsRequest,
    DeleteAclsRequest,
    DeleteAclsResponse,
    DeletedAcls,
    DescribeAclsRequest,
    DescribeAclsResponse,
)
from rillet.wire.acls import AclBinding, AclFilter
from rillet.wire.error_codes import ErrorCode


def _first_error(results: Sequence[AclOutcome] | Sequence[DeletedAcls]) -> BrokerError | None:
    for r in results:
        if r.error_code != ErrorCode.NONE:
            return error_for(r.error_code, r.error_message)
    return None


async def create(
    cluster: ClusterClient,
    to_controller: ToController,
    bindings: Sequence[AclBinding],
    timeout_s: float,
    backoff_s: float,
) -> None:
    """Add ``bindings`` (all of them in one metadata entry)."""
    for b in bindings:
        why = b.invalid_reason()
        if why is not None:
            raise ValueError(f"invalid ACL: {why}")
    await decided(
        cluster,
        to_controller,
        CreateAclsRequest(list(bindings)),
        lambda r: _first_error(r.results),
        "ACL creation",
        timeout_s,
        backoff_s,
    )


async def delete(
    cluster: ClusterClient,
    to_controller: ToController,
    filters: Sequence[AclFilter],
    timeout_s: float,
    backoff_s: float,
) -> list[AclBinding]:
    """Remove the ACLs any of ``filters`` selects; the ones removed."""
    response: DeleteAclsResponse = await decided(
        cluster,
        to_controller,
        DeleteAclsRequest(list(filters)),
        lambda r: _first_error(r.results),
        "ACL deletion",
        timeout_s,
        backoff_s,
    )
    return list(dict.fromkeys(b for r in response.results for b in r.bindings))


async def describe(to_controller: ToController, acl_filter: AclFilter) -> list[AclBinding]:
    """The ACLs ``acl_filter`` selects (every one with the default filter)."""
    response: DescribeAclsResponse = await to_controller(DescribeAclsRequest(acl_filter))
    if response.error_code != ErrorCode.NONE:
        raise error_for(response.error_code, response.error_message)
    return list(response.bindings)
