"""Kafka's DescribeAcls (29), CreateAcls (30) and DeleteAcls (31), on the native apis of the
same numbers. Kafka's numbers for resource types, pattern types, operations and permissions
are rillet's own (``wire.acls``), so bindings and filters cross unchanged; a number that is
not one of them (Kafka's UNKNOWN, 0) is refused as INVALID_REQUEST before anything is
forwarded.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Protocol, TypeVar

from rillet.broker.kafka import shapes
from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.error_map import kafka_message
from rillet.broker.kafka.translation import Answer, Forward, KafkaResponse
from rillet.wire.acl_messages import (
    CreateAclsRequest,
    CreateAclsResponse,
    DeleteAclsRequest,
    DeleteAclsResponse,
    DescribeAclsRequest,
    DescribeAclsResponse,
)
from rillet.wire.acls import AclBinding, AclFilter, Operation, PatternType, Permission, ResourceType
from rillet.wire.error_codes import ErrorCode


class _BadNumber(ValueError):
    pass


N = TypeVar("N", bound=IntEnum)


def _enum(kind: type[N], value: int, what: str) -> N:
    try:
        return kind(int(value))
    except ValueError:
        raise _BadNumber(f"{what} {value} is not known") from None


class _FilterFields(Protocol):
    """What DescribeAcls asks, and each filter of DeleteAcls."""

    @property
    def resource_type_filter(self) -> int: ...
    @property
    def resource_name_filter(self) -> str | None: ...
    @property
    def pattern_type_filter(self) -> int: ...
    @property
    def principal_filter(self) -> str | None: ...
    @property
    def host_filter(self) -> str | None: ...
    @property
    def operation(self) -> int: ...
    @property
    def permission_type(self) -> int: ...


class _CreationFields(Protocol):
    """One binding of CreateAcls."""

    @property
    def resource_type(self) -> int: ...
    @property
    def resource_name(self) -> str: ...
    @property
    def resource_pattern_type(self) -> int: ...
    @property
    def principal(self) -> str: ...
    @property
    def host(self) -> str: ...
    @property
    def operation(self) -> int: ...
    @property
    def permission_type(self) -> int: ...


def _filter(f: _FilterFields) -> AclFilter:
    return AclFilter(
        _enum(ResourceType, f.resource_type_filter, "resource type"),
        f.resource_name_filter,
        _enum(PatternType, f.pattern_type_filter, "pattern type"),
        f.principal_filter,
        f.host_filter,
        _enum(Operation, f.operation, "operation"),
        _enum(Permission, f.permission_type, "permission"),
    )


def _binding(c: _CreationFields) -> AclBinding:
    return AclBinding(
        _enum(ResourceType, c.resource_type, "resource type"),
        str(c.resource_name),
        _enum(PatternType, c.resource_pattern_type, "pattern type"),
        str(c.principal),
        str(c.host),
        _enum(Operation, c.operation, "operation"),
        _enum(Permission, c.permission_type, "permission"),
    )


def translate_create_acls(
    schema: ApiSchema, req: shapes.CreateAclsRequests
) -> Forward[CreateAclsResponse] | Answer:
    def respond(results: list[tuple[int, str | None]]) -> KafkaResponse:
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "results": [
                    {"error_code": c, "error_message": kafka_message(c, m)} for c, m in results
                ],
            },
        )

    try:
        creations = [_binding(c) for c in req.creations]
    except _BadNumber as exc:
        return Answer(respond([(ErrorCode.INVALID_REQUEST, str(exc))] * len(req.creations)))

    def reply(resp: CreateAclsResponse) -> KafkaResponse:
        return respond([(r.error_code, r.error_message) for r in resp.results])

    return Forward(
        CreateAclsRequest(creations),
        reply,
        lambda code: respond([(code, None)] * len(creations)),
    )


def translate_describe_acls(
    schema: ApiSchema, req: shapes.DescribeAclsRequests
) -> Forward[DescribeAclsResponse] | Answer:
    def respond(code: int, message: str | None, bindings: list[AclBinding]) -> KafkaResponse:
        resources: dict[tuple[int, str, int], list[AclBinding]] = {}
        for b in bindings:
            key = (int(b.resource_type), b.resource_name, int(b.pattern_type))
            resources.setdefault(key, []).append(b)
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "error_code": code,
                "error_message": kafka_message(code, message),
                "resources": [
                    {
                        "resource_type": rtype,
                        "resource_name": name,
                        "pattern_type": pattern,
                        "acls": [
                            {
                                "principal": b.principal,
                                "host": b.host,
                                "operation": int(b.operation),
                                "permission_type": int(b.permission),
                            }
                            for b in acls
                        ],
                    }
                    for (rtype, name, pattern), acls in sorted(resources.items())
                ],
            },
        )

    try:
        acl_filter = _filter(req)
    except _BadNumber as exc:
        return Answer(respond(ErrorCode.INVALID_REQUEST, str(exc), []))

    def reply(resp: DescribeAclsResponse) -> KafkaResponse:
        return respond(resp.error_code, resp.error_message, resp.bindings)

    return Forward(DescribeAclsRequest(acl_filter), reply, lambda code: respond(code, None, []))


def translate_delete_acls(
    schema: ApiSchema, req: shapes.DeleteAclsRequests
) -> Forward[DeleteAclsResponse] | Answer:
    def respond(results: list[tuple[int, str | None, list[AclBinding]]]) -> KafkaResponse:
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "filter_results": [
                    {
                        "error_code": code,
                        "error_message": kafka_message(code, message),
                        "matching_acls": [
                            {
                                "error_code": 0,
                                "error_message": None,
                                "resource_type": int(b.resource_type),
                                "resource_name": b.resource_name,
                                "pattern_type": int(b.pattern_type),
                                "principal": b.principal,
                                "host": b.host,
                                "operation": int(b.operation),
                                "permission_type": int(b.permission),
                            }
                            for b in bindings
                        ],
                    }
                    for code, message, bindings in results
                ],
            },
        )

    try:
        filters = [_filter(f) for f in req.filters]
    except _BadNumber as exc:
        return Answer(respond([(ErrorCode.INVALID_REQUEST, str(exc), [])] * len(req.filters)))

    def reply(resp: DeleteAclsResponse) -> KafkaResponse:
        return respond([(r.error_code, r.error_message, r.bindings) for r in resp.results])

    return Forward(
        DeleteAclsRequest(filters),
        reply,
        lambda code: respond([(code, None, [])] * len(filters)),
    )
