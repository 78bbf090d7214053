"""Kafka's SaslHandshake (v1) and SaslAuthenticate as the internal SASL requests (sans-I/O).

The connection protocol answers them itself on a listener with SASL mechanisms (the same
exchange for both listeners: broker/network/connection_protocol.py); on a listener without, the
dispatcher's handlers answer UNSUPPORTED_SASL_MECHANISM and ILLEGAL_SASL_STATE. Either
way the answer is an internal message, translated here into Kafka's.
"""

from __future__ import annotations

from rillet.broker.kafka import shapes
from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.translation import Forward, KafkaResponse
from rillet.wire.sasl_messages import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)


def translate_sasl_handshake(
    schema: ApiSchema, req: shapes.SaslHandshakeRequests
) -> Forward[SaslHandshakeResponse]:
    def reply(resp: SaslHandshakeResponse) -> KafkaResponse:
        return build(
            schema.response_type,
            {"error_code": resp.error_code, "mechanisms": tuple(resp.mechanisms)},
        )

    def fail(code: int) -> KafkaResponse:
        return reply(SaslHandshakeResponse(code, []))

    return Forward(SaslHandshakeRequest(str(req.mechanism)), reply, fail)


def translate_sasl_authenticate(
    schema: ApiSchema, req: shapes.SaslAuthenticateRequests
) -> Forward[SaslAuthenticateResponse]:
    def reply(resp: SaslAuthenticateResponse) -> KafkaResponse:
        return build(
            schema.response_type,
            {
                "error_code": resp.error_code,
                "error_message": resp.error_message,
                "auth_bytes": resp.auth_bytes,
                "session_lifetime": 0,  # ms: the session does not expire
            },
        )

    def fail(code: int) -> KafkaResponse:
        return reply(SaslAuthenticateResponse(code, None, b""))

    return Forward(SaslAuthenticateRequest(bytes(req.auth_bytes)), reply, fail)
