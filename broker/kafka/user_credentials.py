"""Kafka's DescribeUserScramCredentials (50) and AlterUserScramCredentials (51), on the
native apis of the same numbers.

Kafka numbers the mechanisms (1 SCRAM-SHA-256, 2 SCRAM-SHA-512); an alteration is applied
all or nothing, so every user named in it gets the same answer. A refused alteration
always carries a message (Kafka's for its code when rillet has none): clients such as
kafka-python report a user's result by its message alone, so an empty one read as success.
"""

from __future__ import annotations

from rillet.broker.kafka import shapes
from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.error_map import kafka_message
from rillet.broker.kafka.translation import Answer, Forward, KafkaResponse
from rillet.wire.error_codes import ErrorCode
from rillet.wire.user_messages import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
    ScramCredentialDeletion,
    ScramCredentialUpsert,
)

MECHANISM_BY_NUMBER = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
NUMBER_OF_MECHANISM = {name: number for number, name in MECHANISM_BY_NUMBER.items()}
# Kafka's messages for the refusals of an alteration that carry none of rillet's (the
# others: error_map.KAFKA_MESSAGES).
SCRAM_MESSAGES = {
    ErrorCode.UNSUPPORTED_SASL_MECHANISM: "Unknown SCRAM mechanism",
    ErrorCode.RESOURCE_NOT_FOUND: "Attempt to delete a user credential that does not exist",
}


def refusal_message(code: int, message: str | None) -> str | None:
    return kafka_message(code, message, SCRAM_MESSAGES)


def translate_describe(
    schema: ApiSchema, req: shapes.DescribeUserScramCredentialsRequests
) -> Forward[DescribeUserScramCredentialsResponse]:
    names = None if req.users is None else [str(u.name) for u in req.users]

    def reply(resp: DescribeUserScramCredentialsResponse) -> KafkaResponse:
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "error_code": 0,
                "error_message": None,
                "results": [
                    {
                        "user": u.name,
                        "error_code": u.error_code,
                        "error_message": None if u.error_code == 0 else "no credentials",
                        "credential_infos": [
                            {
                                "mechanism": NUMBER_OF_MECHANISM[c.mechanism],
                                "iterations": c.iterations,
                            }
                            for c in u.credentials
                            if c.mechanism in NUMBER_OF_MECHANISM
                        ],
                    }
                    for u in resp.users
                ],
            },
        )

    def fail(code: int) -> KafkaResponse:
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "error_code": code,
                "error_message": refusal_message(code, None),
                "results": [],
            },
        )

    return Forward(DescribeUserScramCredentialsRequest(names), reply, fail)


def translate_alter(
    schema: ApiSchema, req: shapes.AlterUserScramCredentialsRequests
) -> Forward[AlterUserScramCredentialsResponse] | Answer:
    users = list(
        dict.fromkeys([str(d.name) for d in req.deletions] + [str(u.name) for u in req.upsertions])
    )

    def respond(code: int, message: str | None) -> KafkaResponse:
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "results": [
                    {"user": u, "error_code": code, "error_message": refusal_message(code, message)}
                    for u in users
                ],
            },
        )

    mechanisms = [int(d.mechanism) for d in req.deletions]
    mechanisms += [int(u.mechanism) for u in req.upsertions]
    unknown = [m for m in mechanisms if m not in MECHANISM_BY_NUMBER]
    if unknown:
        return Answer(
            respond(ErrorCode.UNSUPPORTED_SASL_MECHANISM, f"unknown mechanism {unknown[0]}")
        )
    native = AlterUserScramCredentialsRequest(
        [
            ScramCredentialUpsert(
                str(u.name),
                MECHANISM_BY_NUMBER[int(u.mechanism)],
                int(u.iterations),
                bytes(u.salt),
                bytes(u.salted_password),
            )
            for u in req.upsertions
        ],
        [
            ScramCredentialDeletion(str(d.name), MECHANISM_BY_NUMBER[int(d.mechanism)])
            for d in req.deletions
        ],
    )

    def reply(resp: AlterUserScramCredentialsResponse) -> KafkaResponse:
        return respond(resp.error_code, resp.error_message)

    return Forward(native, reply, lambda code: respond(code, None))
